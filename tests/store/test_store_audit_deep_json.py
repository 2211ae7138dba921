"""JSON nested too deep for Python's parser (a RecursionError, not a ValueError) in a row of
the round index or the command index is a disagreement ``studio audit verify`` names, its
value cut short, exit status 1. Until 2026-12-06 the audit ended in a RecursionError
traceback (and the value, once named, would have printed 400 KB)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_support import run_sql
from studio_run import two_rounds, two_rounds_in
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.game_commands import check_commands, game_commands
from studio.store.rounds import check_index
from studio.store.rounds import rounds as round_summary

DEEP = "[" * 200_000 + "]" * 200_000
NAMED = "[[[[[[[[[[... (400,002 characters) is not JSON"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("table", "column", "said"),
    [
        (game_commands, "answer", "indexed answer '"),
        (round_summary, "players", "players '"),
        (round_summary, "alerts", "alerts '"),
    ],
)
def test_deep_json_in_an_index_is_named_short(
    tmp_path: Path, table: sa.Table, column: str, said: str
) -> None:
    url = two_rounds_in(tmp_path)
    run_sql(url, sa.update(table).values({column: DEEP}))
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert "Traceback" not in result.output, result.output[-2000:]
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output[-2000:]
    assert said + "[[[[" in result.output, result.output[-2000:]
    assert "... (400,002 characters) is not JSON" in result.output, result.output[-2000:]
    assert len(result.output) < 4000, len(result.output)


@pytest.mark.timeout(60)
async def test_deep_json_in_an_index_on_each_database(database: Database) -> None:
    await two_rounds(database)
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(game_commands).values(answer=DEEP))
        await conn.execute(sa.update(round_summary).values(players=DEEP))
    log = EventLog(database, bad_payloads={})
    rounds = await check_index(database, log)
    commands = await check_commands(database, log)
    assert rounds.problems and commands.problems
    for _key, what in [*rounds.problems, *commands.problems]:
        assert "(400,002 characters) is not JSON" in what, what[:300]
        assert len(what) < 400, len(what)
