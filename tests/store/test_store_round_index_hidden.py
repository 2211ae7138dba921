"""``studio audit verify`` finds a settled round hidden or falsified in the round index:
indexed as in progress (its payout changed), its players emptied, or its row deleted.
Until 2026-12-05 only what a row claimed was checked, and each of these passed.

Real database, SQLite and PostgreSQL; no test double.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from studio_run import two_rounds
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.rounds import check_index, rounds

R1_PLAYERS = "['p1', 'p2']"


async def _edit(database: Database, round_id: str, **values: Any) -> None:
    async with database.engine.begin() as conn:
        await conn.execute(rounds.update().where(rounds.c.round_id == round_id).values(**values))


async def _row(database: Database, round_id: str) -> Any:
    async with database.engine.connect() as conn:
        query = sa.select(rounds).where(rounds.c.round_id == round_id)
        return (await conn.execute(query)).one()


async def test_an_untampered_index_passes(database: Database) -> None:
    run = await two_rounds(database)
    report = await check_index(database, run.log)
    assert report.ok and report.rounds == 3, report.problems


async def test_a_settled_round_indexed_as_in_progress_is_found(database: Database) -> None:
    run = await two_rounds(database)
    settled = await _row(database, "bj-1-R1")
    assert (settled.status, settled.total_payout) == ("settled", "40.00")
    await _edit(database, "bj-1-R1", status="in_progress", total_payout="999999.00", ended=None)
    report = await check_index(database, run.log)
    assert report.problems == [
        ("bj-1-R1", "status in_progress, the log says settled"),
        ("bj-1-R1", f"ended None, the log says {settled.ended}"),
        ("bj-1-R1", "payouts 999999.00, the log says 40.00"),
    ]
    assert (await EventLog(database).verify()).ok  # the chain alone sees nothing


async def test_a_settled_rounds_players_emptied_are_found(database: Database) -> None:
    run = await two_rounds(database)
    await _edit(database, "bj-1-R1", players="[]")
    report = await check_index(database, run.log)
    assert report.problems == [("bj-1-R1", f"players [], the log says {R1_PLAYERS}")]


async def test_a_deleted_row_is_found(database: Database) -> None:
    run = await two_rounds(database)
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(rounds).where(rounds.c.round_id == "bj-1-R1"))
    report = await check_index(database, run.log)
    assert report.rounds == 3
    assert report.problems == [
        ("bj-1-R1", "settled in the event log, but not in the round index"),
    ]


async def test_an_open_round_may_only_be_indexed_as_not_over(database: Database) -> None:
    """bj-1-R3 is open for bets: in progress or interrupted (a clean stop), no players, no
    totals."""
    run = await two_rounds(database)
    await _edit(database, "bj-1-R3", status="interrupted", ended="2026-12-05T10:00:00Z")
    assert (await check_index(database, run.log)).ok
    await _edit(database, "bj-1-R3", status="void", players='["p9"]', total_payout="5.00")
    report = await check_index(database, run.log)
    assert report.problems == [
        ("bj-1-R3", "players ['p9'], the log says []"),
        ("bj-1-R3", "status void, the log has not ended it"),
    ]
    await _edit(database, "bj-1-R3", status="in_progress", players="[]")
    report = await check_index(database, run.log)
    assert report.problems == [("bj-1-R3", "payouts 5.00, the log has not ended it")]
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(rounds).where(rounds.c.round_id == "bj-1-R3"))
    report = await check_index(database, run.log)
    assert report.problems == [("bj-1-R3", "opened in the event log, but not in the round index")]


def test_audit_verify_reports_each_hidden_round(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await two_rounds(db)

    async def tamper() -> None:
        async with Database(url) as db:
            await _edit(db, "bj-1-R1", status="in_progress", total_payout="999999.00", ended=None)
            await _edit(db, "bj-1-R2", players="[]")
            async with db.engine.begin() as conn:
                await conn.execute(sa.delete(rounds).where(rounds.c.round_id == "bj-1-R3"))

    asyncio.run(play())
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    assert "round index OK: 3 rounds agree with the event log" in ok.output
    asyncio.run(tamper())
    bad = runner.invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    lines = bad.output.splitlines()
    at = lines.index("round index: 3 of 3 rounds disagree with the event log")
    end = next(n for n, line in enumerate(lines) if line.startswith("command index OK: "))
    assert lines[at + 1 : end] == [
        "  round bj-1-R1: status in_progress, the log says settled",
        lines[at + 2],  # ended None, the log says <its time>
        "  round bj-1-R1: payouts 999999.00, the log says 40.00",
        "  round bj-1-R2: players [], the log says ['p1']",
        "  round bj-1-R3: opened in the event log, but not in the round index",
        lines[end - 1],  # what an older version wrote so, and repair-index
    ]
    assert "`studio audit repair-index` sets alerts and players" in lines[end - 1]
    assert lines[at + 2].startswith("  round bj-1-R1: ended None, the log says 20")
