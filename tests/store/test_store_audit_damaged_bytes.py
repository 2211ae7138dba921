"""Byte damage in a SQLite database (SQLite keeps any value in any column: text that is no
UTF-8, text where an integer id should be) is a failure ``studio audit verify`` reports,
the record and what is wrong named, exit status 1; not a traceback. Until 2026-12-06 the
driver's "Could not decode to UTF-8", a TypeError comparing a text id with a number, or
``int('7x')`` ended the audit before its report (a round index row whose key is no UTF-8
made it read the same page for ever). PostgreSQL keeps each column's type and only UTF-8
text: none of this can be written there."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from studio_run import two_rounds
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.store.eventlog import events


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A database of two rounds, its first round event's record and its last record."""
    path = tmp_path_factory.mktemp("played") / "studio.db"

    async def play() -> tuple[int, int]:
        async with Database(f"sqlite:///{path}") as db:
            await two_rounds(db)
            async with db.engine.connect() as conn:
                first = sa.select(sa.func.min(events.c.id)).where(
                    events.c.kind == "out.round_event"
                )
                last = sa.select(sa.func.max(events.c.id))
                return (
                    int((await conn.execute(first)).scalar_one()),
                    int((await conn.execute(last)).scalar_one()),
                )

    event, last = asyncio.run(play())
    return path, event, last


def _audit(played: tuple[Path, int, int], tmp_path: Path, damage: str) -> tuple[int, str]:
    copy = tmp_path / "damaged.db"
    shutil.copy(played[0], copy)
    with sqlite3.connect(copy) as conn:
        conn.execute(damage.format(event=played[1], last=played[2]))
    result = CliRunner().invoke(app, ["audit", "verify", "--database", f"sqlite:///{copy}"])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("damage", "line"),
    [
        (
            "UPDATE event_log SET payload = CAST(x'7b22ff' AS TEXT) WHERE id = {event}",
            "chain BROKEN at record {event}: its payload is not UTF-8 text (byte 0xff at offset 2",
        ),
        (
            "UPDATE event_log SET payload = CAST(x'ff' AS BLOB) WHERE id = {event}",
            "chain BROKEN at record {event}: its payload is a blob",
        ),
        (
            "UPDATE event_log SET kind = CAST(x'ff' AS TEXT) WHERE id = {event}",
            "chain BROKEN at record {event}: its kind is not UTF-8 text (byte 0xff at offset 0",
        ),
        (
            "UPDATE event_log SET id = '7x' WHERE id = {last}",
            "chain BROKEN at record {last}: where record {last} should be, its id is text "
            "('7x'), not an integer",
        ),
        (
            "UPDATE event_log SET id = CAST(x'ff' AS TEXT) WHERE id = {last}",
            "chain BROKEN at record {last}: where record {last} should be, its id is text",
        ),
        (
            "UPDATE event_log SET id = {event} + 0.5 WHERE id = {event}",
            "chain BROKEN at record {event}: where record {event} should be, its id is a real "
            "number",
        ),
    ],
)
def test_a_damaged_record_is_named(
    played: tuple[Path, int, int], tmp_path: Path, damage: str, line: str
) -> None:
    code, output = _audit(played, tmp_path, damage)
    assert code == 1, output
    assert line.format(event=played[1], last=played[2]) in output, output


@pytest.mark.timeout(60)
def test_a_payload_that_is_no_utf8_is_left_out_of_the_index_checks(
    played: tuple[Path, int, int], tmp_path: Path
) -> None:
    damage = "UPDATE event_log SET payload = CAST(x'7b22ff' AS TEXT) WHERE id = {event}"
    code, output = _audit(played, tmp_path, damage)
    assert code == 1, output
    assert f"  record {played[1]}: its payload is not UTF-8 text" in output, output
    assert "round index" in output and "command index" in output, output


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("damage", "line"),
    [
        (
            "UPDATE round_summary SET total_payout = CAST(x'ff' AS TEXT) WHERE round_id = "
            "'bj-1-R1'",
            "  round bj-1-R1: payouts \ufffd, the log says",
        ),
        (
            "UPDATE round_summary SET round_id = CAST(x'ff' AS TEXT) WHERE round_id = 'bj-1-R1'",
            "  round bj-1-R1: settled in the event log, but not in the round index",
        ),
        (
            "UPDATE game_commands SET record_id = 'abc' WHERE rowid = 1",
            "indexed at record 'abc', which is not a record id",
        ),
    ],
)
def test_a_damaged_index_row_is_a_disagreement(
    played: tuple[Path, int, int], tmp_path: Path, damage: str, line: str
) -> None:
    code, output = _audit(played, tmp_path, damage)
    assert code == 1, output
    assert "chain OK" in output, output
    assert line in output, output


@pytest.mark.timeout(60)
def test_a_command_index_whose_through_is_no_number_is_an_error(
    played: tuple[Path, int, int], tmp_path: Path
) -> None:
    code, output = _audit(played, tmp_path, "UPDATE game_commands_through SET record_id = 'x'")
    assert code == 2, output
    assert "error: game_commands_through: its record_id 'x' is not a record id" in output, output
