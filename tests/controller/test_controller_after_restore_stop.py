"""A start with ``--after-restore`` does not take the backup's running controller for a kill.

An operator's walk-through followed docs/operations.md, *Backups*: a backup taken while the
controller ran (safe, the page says), played on, everything stopped cleanly, the backup
restored, the start refused, then started with ``--after-restore``. That start logged
"the last run (started ...) ended without a clean stop (killed, or its machine lost)": the
backup holds that run's ``controller.started`` and, taken before its stop, no
``controller.stopped``. With a round in progress the backup caught and the log not behind
the broker, the round's record also got a ``controller_restarted`` event with
``clean_stop`` false (table logic 23) for a crash that never happened.

Now such a start says what is true (the log was restored; its last run's end is not in it)
and logs no ``unclean_stop`` in its ``controller.started``: the table logic is unchanged,
so every log written before replays as it did. Real brokers, a real SQLite file backed up
with SQLite's backup API (what ``sqlite3 FILE ".backup"`` does) while the controller runs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from studio.config import BrokerSettings
from studio.controller.service import ROUND_PHASES
from studio.store import Database, EventLog

sys.path.insert(0, str(Path(__file__).parent))
from test_controller_numbering_after_restore import (
    _backup,
    _Clock,
    _new_shoe,
    _next_round,
    _restore,
    _running,
)

KILLED = "without a clean stop"


async def _started_and_events(live: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    async with Database(f"sqlite:///{live}") as db:
        log = EventLog(db)
        started = await log.read(kinds=["controller.started"], descending=True, limit=1)
        events = [r.payload for r in await log.read(kinds=["out.round_event"])]
    return started[0].payload, events


def _said(caplog: pytest.LogCaptureFixture, words: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if words in r.getMessage()]


@pytest.mark.timeout(120)
async def test_a_backup_of_a_running_controller_restored_behind_the_broker_is_no_kill(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live, saved = tmp_path / "studio.db", tmp_path / "backup.db"
    clock = _Clock()
    async with _running(broker, live, table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")  # R1
        bet = {"type": "bet", "seat": 1, "player": "p1", "stake": "10"}
        await service.submit_command(table_id, {"id": "bet-1", **bet})
        await asyncio.to_thread(_backup, live, saved)  # while it runs
        for _ in range(2):  # R2, R3: published, then lost with the restore
            await _next_round(service, table_id, clock)
    # ... and stopped cleanly (its stop logged in the live file, not in the backup).
    _restore(saved, live)
    caplog.set_level(logging.INFO, logger="studio.controller")
    async with _running(broker, live, table_id, clock, after_restore=True) as service:
        assert service.tables[table_id].round_no == 3  # went on after the broker's
    assert _said(caplog, KILLED) == [], caplog.text
    (restored,) = _said(caplog, "restored from a backup")
    said = restored.getMessage()
    assert said.startswith(f"{table_id}: ") and "has no stop in it" in said, said
    assert "its end is not in the log" in said, said
    # R1, in progress in the backup, was dropped: named, with its stakes (until 2026-12-07
    # "no round was in progress": numbering.resumed had cleared the table's round).
    assert said.endswith(
        f"its end is not in the log: round {table_id}-R1, in progress in the backup (betting; "
        "stakes 10.00: p1 10.00), is dropped: reconcile it with the game platform"
    ), said
    started, events = await _started_and_events(live)
    assert "unclean_stop" not in started, started
    assert [e for e in events if e["type"] == "controller_restarted"] == []


@pytest.mark.timeout(120)
async def test_a_round_the_backup_caught_in_progress_gets_no_controller_restarted_event(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The backup caught R1 in betting; nothing was published after it (the log is not
    # behind the broker): the restored start resumes R1 and asks the devices for its tail.
    live, saved = tmp_path / "studio.db", tmp_path / "backup.db"
    clock = _Clock()
    async with _running(broker, live, table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")
        await asyncio.to_thread(_backup, live, saved)
    _restore(saved, live)
    caplog.set_level(logging.INFO, logger="studio.controller")
    async with _running(broker, live, table_id, clock, after_restore=True) as service:
        table = service.tables[table_id]
        assert table.phase in ROUND_PHASES and table.round_id == f"{table_id}-R1"
    assert _said(caplog, KILLED) == [], caplog.text
    (restored,) = _said(caplog, "restored from a backup")
    assert f"resuming round {table_id}-R1 in progress" in restored.getMessage()
    started, events = await _started_and_events(live)
    assert "unclean_stop" not in started, started
    assert [e for e in events if e["type"] == "controller_restarted"] == []

    # A later start without the option, after this run's clean stop: nothing to say.
    caplog.clear()
    async with _running(broker, live, table_id, clock) as service:
        pass
    assert _said(caplog, KILLED) == [] and _said(caplog, "restored from a backup") == []
