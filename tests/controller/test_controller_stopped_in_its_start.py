"""A controller stopped while its start logs its tables' starts records their clean stop.

A stop signal cancels the start (``ControllerService.__aenter__``), whose exit never runs:
each table whose ``controller.started`` had gone in had no ``controller.stopped`` after it,
and the next start read a kill, warned "ended without a clean stop (killed, ...)" and
logged ``unclean_stop`` for good (a probe of random SIGINTs: 2 in 20 starts of 8 tables).
Now the abandoned start logs the stop of each table it started, the one whose start was
being logged as the signal came too (its append is shielded: it goes in all the same).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from studio.config.models import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.streams import Fanout

TABLES = ["bj1", "bj2", "bj3"]


class StoppedInItsStart(ControllerService):
    """Cancels its own start as ``stop_at`` says: ``(table, "during")`` as that table's
    start is being logged, ``(table, "after")`` once it is."""

    stop_at: tuple[str, str] = ("", "")

    async def submit(self, table_id: str, kind: str, data: dict[str, Any], **kw: Any) -> Any:
        starting = kind == "controller.started"
        task = asyncio.current_task()
        assert task is not None
        if starting and self.stop_at == (table_id, "during"):
            task.cancel()  # the signal, as the append goes out
        outputs = await super().submit(table_id, kind, data, **kw)
        if starting and self.stop_at == (table_id, "after"):
            task.cancel()  # the signal, before the next table's start
        return outputs


CONFIG = StudioConfig(tables=[TableSettings(id=t, ruleset="clubhouse") for t in TABLES])


async def stopped_halfway(service: StoppedInItsStart, stop_at: tuple[str, str]) -> None:
    """Run ``service``'s start in a task of its own, which ``stop_at`` cancels."""
    service.stop_at = stop_at
    starting = asyncio.create_task(service.__aenter__())
    with pytest.raises(asyncio.CancelledError):
        await starting


async def starts_and_stops(log: EventLog) -> list[tuple[str, str]]:
    records = await log.read(kinds=["controller.started", "controller.stopped"])
    return [(r.table_id, r.kind.removeprefix("controller.")) for r in records]


@pytest.mark.parametrize("when", ["during", "after"])
async def test_a_start_stopped_halfway_logs_the_stops_of_the_tables_it_started(
    database: Database, when: str, caplog: pytest.LogCaptureFixture
) -> None:
    log = EventLog(database)
    service = StoppedInItsStart(CONFIG, None, log, Fanout(bus=None), timers=False)
    await stopped_halfway(service, ("bj2", when))
    said = await starts_and_stops(log)
    # bj3's start was never reached; bj2's went in (shielded) though its caller was stopped.
    assert said == [
        ("bj1", "started"),
        ("bj2", "started"),
        ("bj1", "stopped"),
        ("bj2", "stopped"),
    ], said

    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    async with ControllerService(CONFIG, None, log, Fanout(bus=None), timers=False):
        pass
    assert not [r for r in caplog.records if "without a clean stop" in r.getMessage()]
    starts = await log.read(kinds=["controller.started"])
    assert not any(r.payload.get("unclean_stop") for r in starts)


async def test_a_real_crash_before_a_start_stopped_halfway_is_still_told(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A table whose last run was killed and whose start the stopped one had not reached
    keeps its crash to tell (no stop logged for a start that is not this run's)."""
    log = EventLog(database)
    killed = StoppedInItsStart(CONFIG, None, log, Fanout(bus=None), timers=False)
    await killed.__aenter__()  # a whole start, and no stop: as kill -9 leaves it
    for task in killed._tasks:
        task.cancel()
    assert killed._stack is not None
    await killed._stack.aclose()

    service = StoppedInItsStart(CONFIG, None, log, Fanout(bus=None), timers=False)
    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    await stopped_halfway(service, ("bj1", "after"))
    said = await starts_and_stops(log)
    assert said[3:] == [("bj1", "started"), ("bj1", "stopped")], said
    warned = [r.getMessage() for r in caplog.records if "without a clean stop" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("bj1:"), warned  # bj1's kill, told once

    caplog.clear()
    async with ControllerService(CONFIG, None, log, Fanout(bus=None), timers=False):
        pass
    warned = [r.getMessage() for r in caplog.records if "without a clean stop" in r.getMessage()]
    # bj2 and bj3 were killed and not started since: still told; bj1 stopped cleanly.
    assert sorted(w.split(":")[0] for w in warned) == ["bj2", "bj3"], warned


class ReadFailsInTheAbandon(StoppedInItsStart):
    """Stopped after bj2's start; the abandoned start's read of bj2's last start fails."""

    abandoning = False

    async def _abandon_start(self, begun: dict[str, int]) -> None:
        self.abandoning = True
        await super()._abandon_start(begun)

    async def _last_start_or_stop(self, table_id: str) -> Any:
        if self.abandoning and table_id == "bj2":
            raise StoreError("event log read failed: the database connection failed")
        return await super()._last_start_or_stop(table_id)


async def test_a_stop_that_cannot_be_told_for_one_table_is_still_logged_for_the_others(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """And the start ends as it was stopped (cancelled), not in the read's error: the
    process stops cleanly, exit 0 (a review: bj1 got no stop, and the stop exited 2)."""
    log = EventLog(database)
    service = ReadFailsInTheAbandon(CONFIG, None, log, Fanout(bus=None), timers=False)
    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    await stopped_halfway(service, ("bj2", "after"))
    said = await starts_and_stops(log)
    assert said == [("bj1", "started"), ("bj2", "started"), ("bj1", "stopped")], said
    assert "bj2: the clean stop was not logged: event log read failed" in caplog.text
