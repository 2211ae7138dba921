"""`studio audit verify` checks the game commands' index (studio/store/game_commands.py)
against the event log: not chained, a row deleted would let a command sent again be taken
again, a row added would refuse a command never taken, and a row's record moved would have
a replay skip the command."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.game_commands import check_commands, game_commands, game_commands_through

sys.path.insert(0, str(Path(__file__).parent.parent / "controller"))
from crash_harness import generate
from test_controller_checkpoint import play, service

INPUTS, _ = generate(4, seed=3)


async def played(log: EventLog, inputs: list[dict[str, object]] = INPUTS) -> None:
    async with service(log) as made:
        await play(made, inputs)


async def test_an_honest_index_agrees_and_each_kind_of_edit_is_found(database: Database) -> None:
    log = EventLog(database)
    await played(log)
    report = await check_commands(database, log)
    assert report.ok and report.pending == 0
    assert report.commands == sum(item["kind"] == "game.command" for item in INPUTS) > 5
    c = game_commands.c
    async with database.engine.begin() as conn:
        rows = (await conn.execute(sa.select(game_commands).order_by(c.record_id))).all()
        first, second, third = rows[:3]
        await conn.execute(sa.delete(game_commands).where(c.command_id == first.command_id))
        await conn.execute(
            sa.update(game_commands).where(c.command_id == second.command_id).values(record_id=1)
        )
        await conn.execute(
            sa.update(game_commands)
            .where(c.command_id == third.command_id)
            .values(answer='{"accepted":false,"reason":"no"}')
        )
        await conn.execute(
            sa.insert(game_commands).values(
                table_id="crash", command_id="never", record_id=2, answer='{"accepted":true}'
            )
        )
    problems = dict((await check_commands(database, log)).problems)
    stake = {i["data"]["id"]: i["data"].get("stake") for i in INPUTS if i["kind"] == "game.command"}
    assert problems == {
        f"crash/{first.command_id}": f"taken at record {first.record_id}, not indexed: it "
        "would be taken again",
        f"crash/{second.command_id}": f"indexed at record 1, logged at {second.record_id}",
        f"crash/{third.command_id}": 'indexed answer {"accepted":false,"reason":"no"}, logged '
        f'{{"accepted":true,"taken":{{"side_bets":{{}},"stake":"{stake[json.loads(third.command_id)]}"}}}}',
        "crash/never": "indexed (record 2), never answered",
    }


INPUTS_STAKE = {
    item["data"]["id"]: item["data"].get("stake")
    for item in INPUTS
    if item["kind"] == "game.command"
}


async def test_commands_taken_while_it_runs_are_pending_not_wrong(database: Database) -> None:
    log = EventLog(database)
    half = len(INPUTS) // 2
    commands = [n for n, item in enumerate(INPUTS) if item["kind"] == "game.command"]
    upto = next(n for n in commands if n >= half)
    async with service(log) as made:
        await play(made, INPUTS[:upto])
        real_read = log.read
        taken: list[int] = []

        async def read_as_a_command_is_taken(**filters: Any) -> Any:
            if not taken:  # a command taken live as the audit reads the log
                taken.append(upto)
                await play(made, INPUTS[upto : upto + 1])
            return await real_read(**filters)

        log.read = read_as_a_command_is_taken  # type: ignore[method-assign]
        report = await check_commands(database, log)
        log.read = real_read  # type: ignore[method-assign]
    assert taken and report.ok and report.pending == 1, report.problems


async def test_commands_an_older_version_took_are_pending_not_wrong(database: Database) -> None:
    log = EventLog(database)
    await played(log, INPUTS[: len(INPUTS) // 2])
    async with database.engine.begin() as conn:  # it ran since: none indexed, none moved on
        through = (await conn.execute(sa.select(game_commands_through))).one().record_id
        await conn.execute(sa.update(game_commands_through).values(record_id=through - 50))
        await conn.execute(sa.delete(game_commands).where(game_commands.c.record_id > through - 50))
    report = await check_commands(database, log)
    assert report.ok and report.pending > 0, report.problems


async def test_a_row_past_the_index_is_found(database: Database) -> None:
    """No row is ever past ``through``, which moves with each: one there refuses its id
    for good (a review's forged row at record 10**12 passed)."""
    log = EventLog(database)
    await played(log, INPUTS[: len(INPUTS) // 2])
    async with database.engine.begin() as conn:
        await conn.execute(
            sa.insert(game_commands).values(
                table_id="crash", command_id='"later"', record_id=10**12, answer="{}"
            )
        )
    problems = (await check_commands(database, log)).problems
    assert problems == [('crash/"later"', "indexed at record 1000000000000, past the index")]


def test_audit_verify_reports_the_command_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play_then(edit: bool) -> None:
        async with Database(url) as db:
            if not edit:
                await played(EventLog(db))
                return
            async with db.engine.begin() as conn:
                await conn.execute(sa.delete(game_commands))

    asyncio.run(play_then(edit=False))
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    commands = sum(item["kind"] == "game.command" for item in INPUTS)
    assert f"command index OK: {commands} commands agree with the event log" in ok.output
    asyncio.run(play_then(edit=True))
    bad = runner.invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1
    assert f"command index: {commands} disagreements with the event log" in bad.output
    assert "not indexed: it would be taken again" in bad.output
