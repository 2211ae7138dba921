"""A round's alert codes in the round index: one per alert, however often it is indexed.

Each start of the controller re-indexes the latest outputs of each table from the log.
Until 2026-12-05 an alert's code was appended to its round's row each time, so every
restart added the round's alerts again (a round with 24 alerts showed 248 codes, then
267 after one more restart), and ``studio audit verify`` said the index was OK: it did
not compare alerts with the log.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import sqlalchemy as sa
from studio_run import Run
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, RoundIndex
from studio.store.rounds import check_index, rounds


async def _alerted_round(run: Run) -> str:
    """R1: a misscan raised, acknowledged and resolved (cancel): logged three times whole."""
    await run.open_shoe()
    command = {"type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    await run.feed("game.command", {"id": "bet-1", **command})
    await run.feed("timer", {}, dt=20)
    table = run.service.tables["bj-1"]
    round_id = table.round_id
    assert round_id == "bj-1-R1" and table.phase == "dealing"
    await run.feed("shoe.event", {**run._device("shoe"), "event": "misread", "data": {}})
    (alert,) = table.alerts.pausing()
    for verb, extra in (("acknowledge", {}), ("resolve", {"resolution": "cancel"})):
        action = {"verb": verb, "user": "mgr", "reason": "test", "alert_id": alert.alert_id}
        await run.feed("manager.action", {**action, **extra})
    assert alert.state == "resolved"
    await run.feed("timer", {}, dt=1.5)  # the next round opens
    return round_id


async def _restart(database: Database) -> None:
    """A new controller on the same database, started and stopped cleanly."""
    async with Run(database).service:
        pass


async def test_restarts_leave_a_rounds_alerts_as_they_were(database: Database) -> None:
    run = Run(database)
    async with run.service:
        round_id = await _alerted_round(run)
        await run.round({1: "p1"}, ["QH", "TC", "KS", "7D"], [1])  # R2: no alert
    logged = await run.log.read(round_id=round_id, kinds=["out.alert"])
    assert [r.payload["state"] for r in logged] == ["raised", "acknowledged", "resolved"]
    index = RoundIndex(database)
    first = await index.get(round_id)
    assert first is not None and first["alerts"] == ["misscan"]
    assert first["status"] == "cancelled"
    for _ in range(2):
        await _restart(database)
        again = await index.get(round_id)
        assert again == first  # before: ["misscan", "misscan"], then three
        assert (await index.get("bj-1-R2") or {}).get("alerts") == []
    assert [r["round_id"] for r in await index.search(alert_code="misscan")] == [round_id]
    report = await check_index(database, run.log)
    assert report.ok, report.problems


async def test_a_start_mends_the_alerts_an_older_version_counted_again(
    database: Database,
) -> None:
    """A row inflated by the old restarts, among the latest outputs: the next start sets it."""
    run = Run(database)
    async with run.service:
        round_id = await _alerted_round(run)
    async with database.engine.begin() as conn:
        inflated = json.dumps(["misscan"] * 11)
        await conn.execute(
            rounds.update().where(rounds.c.round_id == round_id).values(alerts=inflated)
        )
    assert not (await check_index(database, run.log)).ok
    await _restart(database)
    assert (await RoundIndex(database).get(round_id) or {}).get("alerts") == ["misscan"]
    assert (await check_index(database, run.log)).ok


async def test_audit_finds_alert_codes_that_disagree_with_the_log(database: Database) -> None:
    run = Run(database)
    async with run.service:
        round_id = await _alerted_round(run)
        await run.round({1: "p1"}, ["QH", "TC", "KS", "7D"], [1])
    edits = {
        round_id: ["misscan"] * 21,  # counted again at each restart
        "bj-1-R2": ["timeout"],  # an alert the log does not have
    }
    async with database.engine.begin() as conn:
        for rid, codes in edits.items():
            await conn.execute(
                rounds.update().where(rounds.c.round_id == rid).values(alerts=json.dumps(codes))
            )
    report = await check_index(database, run.log)
    assert report.problems == [
        (round_id, "alerts misscan x21, the log has misscan x1 (each alert once, by id)"),
        ("bj-1-R2", "alerts timeout x1, the log has none (each alert once, by id)"),
    ]
    # An alert left out of the index (hidden from a search by its code) is found too.
    async with database.engine.begin() as conn:
        await conn.execute(rounds.update().values(alerts="[]"))
    report = await check_index(database, run.log)
    assert [r for r, _ in report.problems] == [round_id]
    assert "alerts none, the log has misscan x1" in report.problems[0][1]


def test_audit_verify_exits_1_on_an_inflated_round_until_repair_index(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            run = Run(db)
            async with run.service:
                await _alerted_round(run)

    async def inflate() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            await conn.execute(
                sa.update(rounds)
                .where(rounds.c.round_id == "bj-1-R1")
                .values(alerts=json.dumps(["misscan"] * 3))
            )

    asyncio.run(play())
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    assert "round index OK" in ok.output
    asyncio.run(inflate())
    bad = runner.invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    assert "round index: 1 of 2 rounds disagree with the event log" in bad.output
    assert "round bj-1-R1: alerts misscan x3, the log has misscan x1" in bad.output
    # An older version's inflated rows, beyond what a start re-indexes: repaired on demand.
    fixed = runner.invoke(app, ["audit", "repair-index", "--database", url])
    assert fixed.exit_code == 0, fixed.output
    assert fixed.output.splitlines() == [
        "round bj-1-R1: alerts ['misscan', 'misscan', 'misscan'] -> ['misscan'] (as the log has them)",
        "round index: 1 rounds repaired",
    ]
    again = runner.invoke(app, ["audit", "repair-index", "--database", url])
    assert again.output.splitlines() == ["round index: 0 rounds repaired"]
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
