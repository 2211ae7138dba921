"""The round index (round_summary: the history the console and REST show) is not chained;
``studio audit verify`` checks each indexed round against the event log's round events."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from studio_run import two_rounds
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.eventlog import canonical, chain_hash, events
from studio.store.rounds import check_index, rounds


async def test_an_honest_index_agrees_with_the_log(database: Database) -> None:
    run = await two_rounds(database)
    report = await check_index(database, run.log)
    assert report.ok and report.rounds == 3, report.problems  # R3 is open for bets
    assert (await EventLog(database).verify()).ok


async def test_an_edited_round_record_is_found(database: Database) -> None:
    run = await two_rounds(database)
    async with database.engine.begin() as conn:
        await conn.execute(
            rounds.update().where(rounds.c.round_id == "bj-1-R1").values(total_payout="400.00")
        )
        await conn.execute(
            rounds.update().where(rounds.c.round_id == "bj-1-R2").values(players='["p9"]')
        )
    report = await check_index(database, run.log)
    assert [(r, what.split(",")[0]) for r, what in report.problems] == [
        ("bj-1-R1", "payouts 400.00"),
        ("bj-1-R2", "players ['p9']"),
    ]
    assert (await EventLog(database).verify()).ok  # the chain alone sees nothing


async def test_the_log_cut_after_the_first_round_is_found_by_the_index(
    database: Database,
) -> None:
    """Records deleted from the log's end leave an intact chain (only an anchor kept off the
    machine shows it): the index still lists the round whose records went."""
    run = await two_rounds(database)
    async with database.engine.connect() as conn:
        query = sa.select(sa.func.min(events.c.id)).where(events.c.round_id == "bj-1-R2")
        first_of_r2 = (await conn.execute(query)).scalar_one()
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id >= first_of_r2))
    assert (await EventLog(database).verify()).ok
    report = await check_index(database, run.log)
    assert [r for r, _ in report.problems] == ["bj-1-R2", "bj-1-R3"]
    assert "no round event" in report.problems[0][1]


def test_audit_verify_reports_the_round_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await two_rounds(db)

    async def edit() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            await conn.execute(
                rounds.update().where(rounds.c.round_id == "bj-1-R1").values(status="cancelled")
            )

    asyncio.run(play())
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    assert "round index OK: 3 rounds agree with the event log" in ok.output
    asyncio.run(edit())
    bad = runner.invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    assert "round index: 1 of 3 rounds disagree with the event log" in bad.output
    assert "round bj-1-R1: status cancelled, the log says settled" in bad.output


async def test_a_payout_rewritten_in_the_log_with_the_chain_recomputed_is_found(
    database: Database,
) -> None:
    """The chain has no secret: whoever can write the database can change a settlement and
    hash every later record again, and the chain verifies. The round index, written at the
    time, still holds the payout paid."""
    run = await two_rounds(database)
    records = await EventLog(database).read()
    target = next(
        r
        for r in records
        if r.round_id == "bj-1-R2"
        and r.kind == "out.round_event"
        and r.payload["type"] == "round_settled"
    )
    target.payload["data"]["result"]["totals"]["payouts"] = "0.00"
    prev = next(r.hash for r in records if r.id == target.id - 1)
    async with database.engine.begin() as conn:
        for record in records[target.id - 1 :]:
            payload = canonical(record.payload)
            digest = chain_hash(
                prev, record.id, record.ts, record.table_id, record.round_id, record.kind, payload
            )
            await conn.execute(
                events.update()
                .where(events.c.id == record.id)
                .values(payload=payload, prev_hash=prev, hash=digest)
            )
            prev = digest
    assert (await EventLog(database).verify()).ok
    report = await check_index(database, run.log)
    assert report.problems == [("bj-1-R2", "payouts 20.00, the log says 0.00")]
