"""A record whose payload is not a JSON object, or an indexed answer that is not JSON: the
audit names it (record id, what is wrong) after reporting the chains, exit status 1, and
no traceback. Until 2026-12-05 ``studio audit verify`` and ``repair-index`` crashed
(JSONDecodeError, AttributeError) and the chain break they had found was never printed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_support import run_sql
from studio_run import two_rounds, two_rounds_in
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.store.eventlog import events, payload_problem
from studio.store.game_commands import game_commands


def _a_round_event(url: str) -> int:
    async def read() -> int:
        async with Database(url) as db, db.engine.connect() as conn:
            query = sa.select(sa.func.min(events.c.id)).where(events.c.kind == "out.round_event")
            return int((await conn.execute(query)).scalar_one())

    return asyncio.run(read())


@pytest.mark.parametrize(
    ("payload", "what"),
    [
        ("{not json", "payload '{not json' is not JSON"),
        ("[1,2]", "payload is a JSON array, not an object"),
        ('"str"', "payload is a JSON string, not an object"),
    ],
)
@pytest.mark.parametrize("command", ["verify", "repair-index"])
def test_a_payload_that_is_no_json_object_is_named(
    tmp_path: Path, payload: str, what: str, command: str
) -> None:
    url = two_rounds_in(tmp_path)
    record = _a_round_event(url)
    run_sql(url, sa.update(events).where(events.c.id == record).values(payload=payload))
    result = CliRunner().invoke(app, ["audit", command, "--database", url])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert f"chain BROKEN at record {record}: content does not match its hash" in result.output
    if command == "verify":
        assert f"  record {record}: {what}" in result.output
        lines = result.output.splitlines()
        broken = next(n for n, x in enumerate(lines) if "chain BROKEN" in x)
        named = next(n for n, x in enumerate(lines) if x.startswith(f"  record {record}: "))
        assert broken < named


def test_an_indexed_answer_that_is_not_json_is_named(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    run_sql(url, sa.update(game_commands).values(answer="garbage"))
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "indexed answer 'garbage' is not JSON, logged {" in result.output


def test_payload_problem() -> None:
    assert payload_problem('{"a": 1}') is None
    assert payload_problem("null") == "payload is a JSON null, not an object"
    assert payload_problem("1.5") == "payload is a JSON number, not an object"


@pytest.mark.parametrize("payload", ['"str"', "[1,2]", "{not json"])
async def test_the_audits_reads_name_a_bad_payload_on_each_database(
    database: Database, payload: str
) -> None:
    """SQLite and PostgreSQL: the record is left out of the index checks and named."""
    from studio.store import EventLog
    from studio.store.game_commands import check_commands
    from studio.store.rounds import check_index

    await two_rounds(database)
    async with database.engine.connect() as conn:
        query = sa.select(sa.func.min(events.c.id)).where(events.c.kind == "out.round_event")
        record = int((await conn.execute(query)).scalar_one())
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(events).where(events.c.id == record).values(payload=payload))
    bad: dict[int, str] = {}
    log = EventLog(database, bad_payloads=bad)
    await check_index(database, log)
    await check_commands(database, log)
    assert list(bad) == [record]
    assert not (await log.verify()).ok
