"""A demo stopped with a round paused by open alerts, started again on the same database,
plays on at every table.

The restart cancels the round left in progress; before, the alerts that round left open
still paused its table (every table "PAUSED" in `shoe_change`, nothing dealt until they
were resolved by hand), and at the start each got a `timeout` alert, the controller
counting the time it was down ("resolve it or cancel the round" for a round already
cancelled; a demo review). Now the demo's manager resolves the alerts of the rounds it
cancels, and an alert's escalation counts from the controller's start at the earliest.

The closing line's rounds per table are the rounds each table settled in the run (before:
its last round number, summed over every run, cancelled and interrupted rounds too).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from studio.bus.embedded import free_port
from studio.controller.table import TableController
from studio.demo import DemoOptions, run_demo
from studio.demo.run import RESTART_REASON, DemoHandle
from studio.store import Database
from studio.store.rounds import RoundIndex

PAUSED = "majority-eu"


async def _run_until(
    options: DemoOptions, done: Callable[[DemoHandle], Awaitable[bool]], within: float = 150
) -> tuple[DemoHandle, dict[str, Any]]:
    stop = asyncio.Event()
    handles: list[DemoHandle] = []

    async def ready(handle: DemoHandle) -> None:
        handles.append(handle)

    options.port = free_port()
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready), name="demo")
    try:
        async with asyncio.timeout(within):
            while not handles:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.1)
            while not await done(handles[0]):
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.2)
    except TimeoutError:
        service = handles[0].service if handles else None
        tables = {t: c.summary() for t, c in service.tables.items()} if service else None
        alerts = service.alerts(state="open") if service else None
        stop.set()
        await asyncio.gather(runner, return_exceptions=True)
        pytest.fail(f"the demo did not get there in {within} s; tables: {tables}; open: {alerts}")
    stop.set()
    return handles[0], await runner


def _number(round_id: str) -> int:
    return int(round_id.rsplit("-R", 1)[1])


@pytest.mark.timeout(420)
async def test_a_round_paused_by_alerts_at_the_stop_does_not_hold_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Alerts escalate after 5 s rather than 120: the last run's alerts are older than that
    # when the next run starts, and would be escalated at its start if their wait counted
    # the time the demo was stopped.
    post_init = TableController.__post_init__

    def quick_escalation(self: TableController) -> None:
        self.escalate_after = 5.0
        post_init(self)

    monkeypatch.setattr(TableController, "__post_init__", quick_escalation)
    database = f"sqlite:///{tmp_path}/demo.db"
    options = DemoOptions(
        tables=4,
        pace=0.1,  # 1 s betting windows, 0.5 s between rounds (0.2: 2 s and 0.6 s)
        seed=5,
        faults=False,
        camera=False,  # four tables on a small machine: the restart is what is tested
        database=database,
        status=False,
        out=io.StringIO(),
    )
    first: dict[str, Any] = {}

    async def paused_by_a_fault(handle: DemoHandle) -> bool:
        table = handle.service.tables[PAUSED]
        if "round" not in first:
            if table.phase == "dealing" and table.cards and not table.paused:
                first["round"] = table.round_id
                await handle.faults.inject(handle.sims[PAUSED], "double_pull")
            return False
        if table.round_id != first["round"]:
            first.pop("round")  # the round ended before the fault struck: again
            return False
        open_alerts = handle.service.alerts(state="open", table=PAUSED)
        return table.paused and bool(open_alerts)

    handle, _ = await _run_until(options, paused_by_a_fault)
    left = first["round"]
    last_round = {t: c.round_no for t, c in handle.service.tables.items()}
    left_open = [a["alert_id"] for a in handle.service.alerts(state="open", table=PAUSED)]
    assert left_open
    last_run = {a["alert_id"] for a in handle.service.alerts()}
    await asyncio.sleep(6)  # the alerts left open are past their escalation when it restarts

    second: dict[str, Any] = {}

    async def every_table_settled_a_round(handle: DemoHandle) -> bool:
        service = handle.service
        settled = {}
        for table in service.tables:
            rounds = await service.rounds_search(table=table)
            settled[table] = [
                r
                for r in rounds
                if r["status"] == "settled" and _number(r["round_id"]) > last_round[table]
            ]
        second["alerts"] = service.alerts()
        return all(settled.values())

    handle, result = await _run_until(options, every_table_settled_a_round, within=200)
    service = handle.service
    alerts = {a["alert_id"]: a for a in second["alerts"]}
    # The round left paused was cancelled, and the demo's manager resolved its alerts.
    record = await service.round_record(left)
    assert record["summary"]["status"] == "cancelled"
    for alert_id in left_open:
        alert = alerts[alert_id]
        assert alert["state"] == "resolved", alert
        resolution = alert["resolution"] or {}
        # A `timeout` alert of the last run closes with the alert it escalated.
        escalated = alert["evidence"][0]["alert_id"] if alert["code"] == "timeout" else None
        reason = f"{escalated} resolved" if escalated else RESTART_REASON
        assert (resolution.get("by"), resolution.get("reason")) == ("demo", reason), alert
    # No alert of the last run was escalated at the start (nor later: resolved first).
    raised = [a for a in alerts.values() if a["alert_id"] not in last_run]
    escalated = [a for a in raised if a["code"] == "timeout"]
    assert not [a for a in escalated if a["evidence"][0]["alert_id"] in last_run], escalated

    # The closing line's count: the rounds each table settled in this run.
    async with Database(database) as db:
        index = RoundIndex(db)
        expected = {}
        for table in result["rounds"]:
            rounds = await index.search(table=table, limit=1000)
            expected[table] = sum(
                r["status"] == "settled" and _number(r["round_id"]) > last_round[table]
                for r in rounds
            )
    assert result["rounds"] == expected
    assert all(n >= 1 for n in result["rounds"].values()), result
