"""A deadline a timer input cannot move is not fired again every tick.

A review (2026-12-07): a table paused between rounds kept its round gap's deadline in the
past (the next round waits for the pause to lift), so the controller's timers submitted a
``timer`` input every tick, each one logged: ~15 records a second, 55,000 an hour, for as
long as the pause lasted. Now a deadline a timer input left due waits for another input,
while a later deadline falling due (an alert's escalation) still fires.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timedelta
from pathlib import Path

from studio.controller import ControllerService
from studio.store import EventLog

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import controller, feed, generate  # noqa: E402
from postgres_support import backend_log  # noqa: E402

INPUTS, _ = generate(2, seed=41)
PAUSE = {"verb": "pause", "user": "boss", "reason": "a look"}


def _timed(log: EventLog, clock: dict[str, datetime]) -> ControllerService:
    """A controller with its timers running, on the test's clock."""
    return controller(log, clock, timers=True, tick=0.01)


async def _timer_records(log: EventLog) -> int:
    return len(await log.read(kinds=["timer"], table_id="crash"))


async def _paused_between_rounds(log: EventLog, clock: dict[str, datetime]) -> None:
    """The script's first round played and settled; a manager pauses the table."""
    async with controller(log, clock) as first:
        for n in range(len(INPUTS)):
            await feed(first, INPUTS[n : n + 1], clock)
            table = first.tables["crash"]
            if table.round_no == 1 and table.phase == "settled":
                break
        assert table.phase == "settled" and table.next_round_at is not None
        await first.submit("crash", "manager.action", PAUSE)
        assert first.tables["crash"].paused


async def test_a_table_paused_between_rounds_logs_no_timer_every_tick(tmp_path: Path) -> None:
    async with backend_log("sqlite", tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        await _paused_between_rounds(log, clock)
        clock["t"] += timedelta(seconds=30)  # far past the round gap, still paused
        async with _timed(log, clock) as made:
            before = await _timer_records(log)
            await asyncio.sleep(0.5)  # some 50 ticks of the timers
            table = made.tables["crash"]
            assert table.paused and table.phase == "settled"
            assert table.next_round_at is not None and table.next_round_at < clock["t"]
            fired = await _timer_records(log) - before
            # Before: one a tick (about 50 here). Now the first one finds it cannot move.
            assert fired <= 1, fired
            # The pause lifted (another input): the round gap runs from then, and the
            # next round opens when it is over.
            await made.submit("crash", "manager.action", {**PAUSE, "verb": "resume"})
            opened = made.tables["crash"].round_no
            clock["t"] += timedelta(seconds=2)
            async with asyncio.timeout(10):
                while made.tables["crash"].round_no == opened:
                    await asyncio.sleep(0.01)


async def test_a_later_deadline_still_fires_while_an_earlier_one_is_stuck(
    tmp_path: Path,
) -> None:
    """Paused between rounds (the round gap's deadline stuck), a card drawn then raises an
    alert: its escalation, due later, still fires a timer."""
    async with backend_log("sqlite", tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        await _paused_between_rounds(log, clock)
        clock["t"] += timedelta(seconds=30)
        async with _timed(log, clock) as made:
            drawn = {"device": "shoe", "seq": 31, "ts": clock["t"].isoformat(), "card": "2H"}
            await made.submit("crash", "shoe.card", {**drawn, "shoe": "S1"})
            table = made.tables["crash"]
            (alert,) = table.alerts.pausing()
            assert table.next_round_at is not None and table.next_round_at < clock["t"]
            await asyncio.sleep(0.2)  # the round gap's deadline found stuck
            clock["t"] += timedelta(seconds=table.escalate_after + 1)
            async with asyncio.timeout(10):
                while not alert.subject.get("escalated"):
                    await asyncio.sleep(0.01)
            codes = [a.code.value for a in made.tables["crash"].alerts.all()]
            assert "timeout" in codes, codes
