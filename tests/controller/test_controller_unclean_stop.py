"""A start after a run that did not stop cleanly (kill -9, a machine lost) says so.

A review killed the controller mid-round about 55 times: each start said only "recovered 1
tables from 33 logged inputs", with no warning, no alert and nothing in the round's record.
A clean stop now logs ``controller.stopped`` for each table, and each start says whether it
logs one (``controller.started``'s ``logs_stop``): a start finding the previous run's start
with no stop after it logs a WARNING naming the rounds it resumes, and each such round gets
a ``controller_restarted`` round event (``clean_stop`` false; table logic 23); a start after a
clean stop says nothing, as before.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig
from studio.controller import ControllerService, Input, TableController
from studio.controller.service import ROUND_PHASES
from studio.rules.ruleset import ruleset_from_spec
from studio.store import Database, EventLog
from studio.streams import Fanout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from crash_harness import T0, TABLE, generate  # noqa: E402

# A controller that plays the script up to its first round's deal, says READY and waits to
# be killed (or, with "stop", stops cleanly).
_RUN = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path.insert(0, sys.argv[1])
    from crash_harness import T0, TABLE, controller, feed
    from studio.store import Database, EventLog

    async def main():
        inputs = json.loads(open(sys.argv[2]).read())
        clock = {"t": T0}
        table = TABLE.model_copy(update={"id": sys.argv[5]})
        async with Database(sys.argv[3]) as db:
            async with controller(EventLog(db), clock, table=table) as service:
                await feed(service, inputs, clock, table=table.id)
                print("READY", flush=True)
                if sys.argv[4] == "stop":
                    return
                await asyncio.Event().wait()

    asyncio.run(main())
    """
)


def _to_the_deal() -> list[dict[str, object]]:
    """The script's inputs up to its first round's deal (a round in progress)."""
    inputs, _ = generate(1, seed=11)
    table = TableController(TABLE, ruleset_from_spec(TABLE.ruleset), round_gap=1.0)
    for n, item in enumerate(inputs, 1):
        table.handle(Input(item["kind"], item["data"], datetime.fromisoformat(item["ts"])))
        if table.phase == "dealing" and table.cards:
            return inputs[:n]
    raise AssertionError("the script never deals")


def _run_first(tmp_path: Path, url: str, how: str, table_id: str) -> None:
    script = tmp_path / "inputs.json"
    script.write_text(json.dumps(_to_the_deal()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, "-c", _RUN, str(HERE), str(script), url, how, table_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line == b"READY\n", process.communicate(timeout=60)[1].decode()[-2000:]
    if how == "kill":
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_a_start_after_a_kill_warns_and_says_so_in_the_round(
    broker: BrokerSettings,
    tmp_path: Path,
    table_id: str,
    how: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    await asyncio.to_thread(_run_first, tmp_path, url, how, table_id)
    settings = TABLE.model_copy(update={"id": table_id})
    clock = {"t": T0}
    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    async with Database(url) as db, MessageBus(broker, f"ctl-{table_id}") as bus:
        log = EventLog(db)
        config = StudioConfig(broker=broker, tables=[settings])
        service = ControllerService(
            config, bus, log, Fanout(bus), clock=lambda: clock["t"], timers=False, round_gap=1.0
        )
        async with service:
            table = service.tables[table_id]
            assert table.phase in ROUND_PHASES and table.round_id == f"{table_id}-R1"
        events = [r.payload for r in await log.read(kinds=["out.round_event"])]
        stops = await log.read(kinds=["controller.stopped"])
    restarted = [e for e in events if e["type"] == "controller_restarted"]
    warned = [r.getMessage() for r in caplog.records if "without a clean stop" in r.getMessage()]
    if how == "kill":
        assert len(restarted) == 1 and restarted[0]["round_id"] == f"{table_id}-R1"
        assert restarted[0]["data"] == {"clean_stop": False}
        assert len(warned) == 1 and f"resuming round {table_id}-R1 in progress" in warned[0]
        # Not only a kill: a run that stopped itself on a database failure (its lock lost)
        # could not log its stop either (until 2026-12-07 "killed, or its machine lost").
        assert (
            "without a clean stop (killed, its machine lost, or it stopped on a database "
            "failure that kept its stop from being logged: see that run's log)" in warned[0]
        ), warned[0]
    else:
        assert restarted == [] and warned == []
    # Each run that stopped cleanly logged its stop (the first only when stopped so).
    assert len(stops) == (2 if how == "stop" else 1)
