"""A round cancelled while betting is indexed with the players its refunds name.

Its players were indexed when betting closed, so a round cancelled before that kept none:
a search by a refunded player did not find it, and the CSV export listed it without
players (a shift manager's walk-through). Now the cancellation's refunds name them, the
audit compares them, and ``studio audit repair-index`` sets them on rows indexed before.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from studio_run import Run
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, RoundIndex
from studio.store.rounds import check_index, rounds


async def _cancelled_while_betting(run: Run) -> str:
    await run.open_shoe()
    for player in ("p1", "p2"):
        command = {"type": "bet", "seat": 1 if player == "p1" else 2, "player": player}
        await run.feed("game.command", {"id": f"bet-{player}", **command, "stake": "10.00"})
    table = run.service.tables["bj-1"]
    assert table.phase == "betting"
    await run.feed("manager.action", {"verb": "cancel_round", "user": "mgr", "reason": "test"})
    assert table.phase != "betting"
    return str(table.round_id)


async def test_a_round_cancelled_while_betting_is_found_by_its_players(database: Database) -> None:
    run = Run(database)
    async with run.service:
        round_id = await _cancelled_while_betting(run)
    row = await RoundIndex(database).get(round_id)
    assert row is not None
    assert (row["status"], row["players"]) == ("cancelled", ["p1", "p2"])
    found = await RoundIndex(database).search(player="p2")
    assert [r["round_id"] for r in found] == [round_id]
    assert (await check_index(database, run.log)).problems == []


def test_an_older_row_without_them_is_reported_and_repaired(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            run = Run(db)
            async with run.service:
                await _cancelled_while_betting(run)

    async def as_before() -> None:  # as a version before 2026-12-05 indexed it
        async with Database(url) as db, db.engine.begin() as conn:
            await conn.execute(
                sa.update(rounds).where(rounds.c.round_id == "bj-1-R1").values(players="[]")
            )

    asyncio.run(play())
    asyncio.run(as_before())
    runner = CliRunner()
    bad = runner.invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    assert "round bj-1-R1: players [], the log says ['p1', 'p2']" in bad.output
    assert "`studio audit repair-index` sets alerts and players from the event log" in bad.output
    fixed = runner.invoke(app, ["audit", "repair-index", "--database", url])
    assert fixed.exit_code == 0, fixed.output
    assert fixed.output.splitlines() == [
        "round bj-1-R1: players [] -> ['p1', 'p2'] (as the log has them)",
        "round index: 1 rounds repaired",
    ]
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
