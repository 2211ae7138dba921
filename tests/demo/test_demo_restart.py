"""`studio demo` stopped and started again on the same database carries on.

The simulator's shoes and layouts start anew with each run while the controller
resumes from the log. Before, the second run's tables never dealt again: the round
left in progress waited for cards from a shoe that no longer existed, and devices
numbering from 1 again would have been dropped as duplicates of what the log held.
Now the round left in progress is cancelled with its reason, the shoe is changed, the
devices continue their numbering from the state kept beside the database, and rounds
settle again, every card confirmed by the camera. A card that leaves the shoe as the demo
stops reaches the log before the controller stops listening: missed, it could not be
replayed to the next run, whose table would wait on an integrity alert.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from studio.bus.embedded import free_port
from studio.controller import ControllerService
from studio.demo import DemoOptions, run_demo
from studio.demo.run import RESTART_REASON, DemoHandle, device_state_dir

TABLE = "clubhouse"


async def _run_until(options: DemoOptions, done: Callable[[DemoHandle], Awaitable[bool]]) -> None:
    stop = asyncio.Event()
    handles: list[DemoHandle] = []

    async def ready(handle: DemoHandle) -> None:
        handles.append(handle)

    options.port = free_port()
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready), name="demo")
    try:
        async with asyncio.timeout(150):
            while not handles:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.1)
            while not await done(handles[0]):
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.2)
    except TimeoutError:
        # Say where the table stood, so that a failure here can be told from a slow machine.
        service = handles[0].service if handles else None
        table = service.tables[TABLE].summary() if service else None
        alerts = service.alerts(reveal=True) if service else None
        pytest.fail(f"the demo did not get there in 150 s; table: {table}; alerts: {alerts}")
    finally:
        stop.set()
        await runner


async def _settled(service: ControllerService) -> set[str]:
    rounds = await service.rounds_search(table=TABLE)
    return {r["round_id"] for r in rounds if r["status"] == "settled"}


@pytest.mark.timeout(360)
async def test_a_second_run_on_the_same_database_deals_again(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/demo.db"
    options = DemoOptions(
        tables=1,  # the clubhouse table
        pace=0.1,  # 1 s betting windows, 0.5 s between rounds (0.2: 2 s and 0.6 s)
        seed=3,
        faults=False,
        database=database,
        status=False,
        out=io.StringIO(),
    )
    first: dict[str, Any] = {}

    async def one_settled_and_the_next_dealt_into(handle: DemoHandle) -> bool:
        service = handle.service
        table = service.tables[TABLE]
        if await _settled(service) and table.phase == "dealing" and table.cards:
            first["left"] = table.round_id
            first["settled"] = await _settled(service)
            # A card leaves the shoe just as the demo is stopped: it must still reach the
            # controller's log, or the next run waits on an event no device can replay.
            handle.sims[TABLE].deal()
            return True
        return False

    await _run_until(options, one_settled_and_the_next_dealt_into)
    state = device_state_dir(database)
    assert state is not None
    assert {p.name for p in state.iterdir()} >= {f"{TABLE}__shoe-1.json", f"{TABLE}__cam-1.json"}

    second: dict[str, Any] = {}

    async def two_more_settled(handle: DemoHandle) -> bool:
        service = second["service"] = handle.service
        second["new"] = await _settled(service) - first["settled"]
        return len(second["new"]) >= 2

    await _run_until(options, two_more_settled)
    service: ControllerService = second["service"]
    left = await service.round_record(first["left"])
    assert left["summary"]["status"] == "cancelled"
    cancelled = [e for e in left["events"] if e.get("type") == "round_cancelled"]
    assert cancelled and cancelled[0]["data"]["reason"] == RESTART_REASON
    assert not [a for a in service.alerts() if a["code"] in ("device_offline", "integrity")]
    for round_id in second["new"]:
        events = (await service.round_record(round_id))["events"]
        dealt = [e for e in events if e.get("type") == "card_dealt"]
        confirmed = [e for e in events if e.get("type") == "card_confirmed"]
        # Every card the new shoe dealt (burns aside) was seen by the camera.
        assert len(confirmed) == sum(e["data"]["target"].get("kind") != "burn" for e in dealt)
        assert {e["data"]["camera"] for e in confirmed} <= {"match", "camera_unreadable"}


@pytest.mark.parametrize(
    ("url", "state"),
    [
        ("sqlite:///:memory:", None),
        ("sqlite:///:memory:?timeout=3", None),  # (was a ":memory:?timeout=3-devices" folder)
        ("sqlite:///", None),
        ("sqlite:///var/demo.db", Path("var/demo-devices")),
        ("sqlite:///var/demo.db?timeout=3", Path("var/demo-devices")),
        ("postgresql://studio@db.example/studio", Path("var/demo-devices")),
    ],
)
def test_the_devices_folder_is_beside_a_database_file_only(url: str, state: Path | None) -> None:
    assert device_state_dir(url) == state
