from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store import Database, EventLog, safe_url
from studio.store.eventlog import GENESIS, events, parse_head


async def test_append_read_and_verify(database: Database) -> None:
    log = EventLog(database)
    for i in range(20):
        await log.append(
            "t1" if i % 2 else "t2", "shoe.card", {"seq": i, "card": "QH"}, round_id="r1"
        )
    records = await log.read()
    assert [r.id for r in records] == list(range(1, 21))
    assert records[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(records))
    assert len(await log.read(table_id="t1")) == 10
    report = await log.verify()
    assert report.ok and report.records == 20 and report.head == records[-1].hash


async def test_chain_survives_a_new_writer(database: Database) -> None:
    await EventLog(database).append("t1", "a", {"n": 1})
    # A restarted controller picks up the head from the database.
    await EventLog(database).append("t1", "b", {"n": 2})
    report = await EventLog(database).verify()
    assert report.ok and report.records == 2


async def test_tampering_is_detected(database: Database) -> None:
    log = EventLog(database)
    for i in range(5):
        await log.append("t1", "payout", {"amount": f"{i}.00"})
    async with database.engine.begin() as conn:
        await conn.execute(
            events.update().where(events.c.id == 3).values(payload='{"amount":"999.00"}')
        )
    report = await log.verify()
    assert not report.ok
    assert report.first_bad_id == 3
    assert "hash" in report.reason


async def test_deletion_is_detected(database: Database) -> None:
    log = EventLog(database)
    for i in range(5):
        await log.append("t1", "x", {"i": i})
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id == 2))
    report = await log.verify()
    assert not report.ok and report.first_bad_id == 3


async def test_deleting_the_newest_records_is_detected_against_an_earlier_head(
    database: Database,
) -> None:
    """The chain alone cannot tell a log cut short from one that ended there: before, a
    deleted tail verified as intact and the next append carried on from the shorter head.
    A head recorded earlier (``studio audit verify`` prints it) must still be in the log."""
    log = EventLog(database)
    await log.append("t1", "game.command", {"type": "bet", "stake": "100.00"}, round_id="R1")
    await log.append("t1", "out.round_event", {"type": "round_settled"}, round_id="R1")
    await log.append("t1", "out.round_event", {"type": "round_settled"}, round_id="R2")
    earlier = await log.verify()
    assert earlier.ok and earlier.head_id == 3 and parse_head(earlier.anchor) == (3, earlier.head)
    anchor = (earlier.head_id, earlier.head)
    await log.append("t1", "timer", {})
    assert (await log.verify(anchor)).ok  # the log grew past the head: fine
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id >= 3))
    assert (await EventLog(database).verify()).ok  # what the chain alone cannot see
    cut = await EventLog(database).verify(anchor)
    assert not cut.ok and cut.first_bad_id == 3 and cut.records == 2
    assert "ends at record 2, before the expected head 3" in cut.reason
    await EventLog(database).append("t1", "controller.started", {})  # record 3 again
    rewritten = await EventLog(database).verify(anchor)
    assert not rewritten.ok and rewritten.first_bad_id == 3
    assert "differs from the expected head" in rewritten.reason


def test_audit_verify_prints_the_head_and_checks_an_expected_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def append(n: int) -> None:
        async with Database(url) as db:
            for i in range(n):
                await EventLog(db).append("t1", "x", {"i": i})

    async def delete_newest() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            await conn.execute(sa.delete(events).where(events.c.id == 5))

    asyncio.run(append(5))
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    chain, admin, index, commands, accounts, checkpoints, checked = ok.output.splitlines()
    assert checked.startswith("database checked: ")
    assert accounts == "accounts OK: 0 accounts agree with the admin log"
    assert checkpoints == "checkpoints OK: 0 of 0 match their records"
    assert index == "round index OK: 0 rounds agree with the event log"
    assert commands == "command index OK: 0 commands agree with the event log"
    head = chain.split("head ")[1]
    assert head.startswith("5:") and len(head) == 2 + 64
    assert admin == f"admin log OK: 0 records, head 0:{GENESIS}"  # no account changed yet
    again = runner.invoke(app, ["audit", "verify", "--database", url, "--expect-head", head])
    assert again.exit_code == 0, again.output
    asyncio.run(delete_newest())
    assert runner.invoke(app, ["audit", "verify", "--database", url]).exit_code == 0
    cut = runner.invoke(app, ["audit", "verify", "--database", url, "--expect-head", head])
    assert cut.exit_code == 1
    assert "chain BROKEN at record 5: the log ends at record 4" in cut.output
    bad = runner.invoke(app, ["audit", "verify", "--database", url, "--expect-head", "5:xyz"])
    assert bad.exit_code == 2 and "expected ID:HASH" in bad.output
    # The admin log has an anchor of its own.
    admin_cut = runner.invoke(
        app, ["audit", "verify", "--database", url, "--expect-admin-head", f"1:{'a' * 64}"]
    )
    assert admin_cut.exit_code == 1
    assert "admin log BROKEN at record 1: the log ends at record 0" in admin_cut.output


async def test_a_cancelled_append_never_breaks_the_chain(database: Database) -> None:
    import asyncio

    log = EventLog(database)
    await log.append("t1", "a", {"n": 0})
    for n in range(1, 60):
        task = asyncio.create_task(log.append("t1", "a", {"n": n}))
        # Let it get into the write at various depths, then cancel it (a shutdown).
        for _ in range(n % 12):
            await asyncio.sleep(0)
        task.cancel()
        await log.append("t1", "b", {"n": n})
    report = await log.verify()
    assert report.ok, report
    kinds = [r.kind for r in await log.read()]
    assert kinds.count("b") == 59


async def test_store_errors_hide_the_database_password() -> None:
    # Port 1: nothing listens, the connection is refused at once.
    url = "postgresql://studio:S3cr3t-DB-pass@127.0.0.1:1/studio"
    with pytest.raises(StoreError, match="cannot open database") as refused:
        async with Database(url):
            pass
    assert "postgresql://studio:***@127.0.0.1:1/studio" in str(refused.value)
    with pytest.raises(StoreError) as unsupported:
        Database("mysql://studio:S3cr3t-DB-pass@127.0.0.1/studio")
    assert "S3cr3t" not in str(refused.value) + str(unsupported.value)
    assert safe_url("sqlite:///var/studio.db") == "sqlite:///var/studio.db"
    assert safe_url("not a url: S3cr3t") == "***"


@pytest.mark.parametrize("url", ["sqlite:////proc/nope/x.db", "sqlite:////dev/null/studio.db"])
def test_a_sqlite_path_that_cannot_be_made_is_a_store_error(url: str) -> None:
    # Every command turns a StoreError into "error: ..." and exit 2; an OSError was a traceback.
    with pytest.raises(StoreError, match="cannot open database sqlite:////"):
        Database(url)
