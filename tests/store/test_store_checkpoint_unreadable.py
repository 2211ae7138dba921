"""A checkpoint row that cannot be read as a checkpoint is none: a start refuses it and
replays the whole log, and ``studio audit verify`` reports it.

A review: a checkpoint whose bytes were made text that is no UTF-8 (SQLite keeps any value
in any column) stopped the controller's start ("checkpoint of clubhouse not read: Could
not decode to UTF-8", exit 2) and ended ``studio audit verify`` in a traceback, where the
documentation says such a checkpoint is not taken and the whole log is replayed.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from studio.cli import app
from studio.store import EventLog
from studio.store.checkpoints import Checkpoints, UnreadableCheckpoint

sys.path.insert(0, str(Path(__file__).parent.parent / "controller"))
from crash_harness import generate
from postgres_support import backend_log as database
from test_controller_checkpoint import played_and_checkpointed, rebuilt

INPUTS, _ = generate(6, seed=11)

# As the review damaged it: one byte of the state made NUL, the whole made text.
NOT_UTF8 = "UPDATE checkpoints SET state = substr(state, 1, 1000) || X'00' || substr(state, 1002)"
NO_RECORD = "UPDATE checkpoints SET record_id = 'none'"


async def _damaged(log: EventLog, statement: str) -> None:
    async with log.db.engine.begin() as conn:
        await conn.execute(sa.text(statement))


@pytest.mark.parametrize("statement", [NOT_UTF8, NO_RECORD])
async def test_a_start_replays_the_whole_log_past_an_unreadable_checkpoint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, statement: str
) -> None:
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS)
        await _damaged(log, statement)
        with caplog.at_level(logging.ERROR):
            started, replayed = await rebuilt(log, use_checkpoint=True)
        assert started.stats.checkpoints_refused == 1
        assert "checkpoint not used" in caplog.text
        _, replayed_whole = await rebuilt(log, use_checkpoint=False)
        assert replayed == replayed_whole


async def test_a_row_naming_no_record_is_no_checkpoint(tmp_path: Path) -> None:
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS)
        await _damaged(log, NO_RECORD)
        with pytest.raises(UnreadableCheckpoint, match="its row names no record"):
            await Checkpoints(log.db).load("crash")


@pytest.mark.parametrize(
    ("statement", "said"),
    [
        (NOT_UTF8, "  checkpoint of crash: does not match its record "),
        (NO_RECORD, "  checkpoint of crash: its row names no record ('none')"),
    ],
)
def test_the_audit_reports_an_unreadable_checkpoint(
    tmp_path: Path, statement: str, said: str
) -> None:
    async def made() -> str:
        async with database("sqlite", tmp_path) as log:
            await played_and_checkpointed(log, INPUTS)
            await _damaged(log, statement)
            return log.db.url

    url = asyncio.run(made())
    bad = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    assert "checkpoints: 1 of 1 do not match their records" in bad.output
    assert said in bad.output
