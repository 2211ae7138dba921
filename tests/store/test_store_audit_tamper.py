"""An auditor's attempts on the hash chain, made directly in the database (SQLite and the
real PostgreSQL): each must be found by ``verify`` (and ``studio audit verify``), at the
record where it was made; and a chain written honestly must verify whatever its payloads."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.store.eventlog import GENESIS, admin_events, events


async def _five(database: Database) -> EventLog:
    log = EventLog(database)
    for i in range(1, 6):
        await log.append("t1", "payout", {"amount": f"{i}.00", "seat": i}, round_id=f"R{i}")
    return log


async def _update(database: Database, record_id: int, **values: Any) -> None:
    async with database.engine.begin() as conn:
        await conn.execute(events.update().where(events.c.id == record_id).values(**values))


async def test_honest_payloads_of_every_shape_verify(database: Database) -> None:
    """Before, verify hashed the payload parsed and dumped again, not the text that was
    hashed: a payload with integer keys (seat numbers) is stored with its keys sorted as
    numbers ("9" before "10"), dumped again they sort as strings: a valid chain BROKEN."""
    log = EventLog(database)
    payloads: list[dict[Any, Any]] = [
        {10: "ten", 9: "nine", 2: "two"},  # seat numbers as keys
        {"amount": Decimal("1.50"), "f": 0.1, "big": 1e16, "neg": -0.0, "int": 2**70},
        {"nan": float("nan"), "inf": float("inf")},
        {"name": "Jos\u00e9", "same": "Jose\u0301", "emoji": "\U0001f0a1", "lone": "\ud800"},
        {"nested": {"b": [1, {"z": 1, "a": 2}], "a": None}, "tuple": (1, 2)},
    ]
    for payload in payloads:
        await log.append("t\u00e9", "k\u00fcnd", payload, round_id="R\u00e91")
    report = await EventLog(database).verify()
    assert report.ok, report
    assert report.records == len(payloads)


async def test_an_edit_of_any_column_is_found_where_it_was_made(database: Database) -> None:
    await _five(database)
    edits: list[dict[str, Any]] = [
        {"payload": '{"amount":"999.00","seat":2}'},
        {"ts": "2020-01-01T00:00:00.000000+00:00"},
        {"table_id": "t2"},
        {"round_id": None},
        {"kind": "refund"},
        {"hash": "f" * 64},
    ]
    for edit in edits:
        async with database.engine.connect() as conn:
            before = (await conn.execute(sa.select(events).where(events.c.id == 2))).one()
        await _update(database, 2, **edit)
        report = await EventLog(database).verify()
        assert not report.ok and report.first_bad_id == 2 and report.records == 1, (edit, report)
        await _update(database, 2, **{k: getattr(before, k) for k in edit})
        assert (await EventLog(database).verify()).ok


async def test_a_payload_rewritten_to_the_same_meaning_is_found(database: Database) -> None:
    """The bytes stored are the bytes hashed: before, a payload re-spaced or with its keys
    reordered verified, since verify hashed it parsed and dumped again."""
    await _five(database)
    await _update(database, 3, payload='{"seat": 3, "amount": "3.00"}')
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 3


async def test_a_payload_that_is_not_json_is_reported_not_a_crash(database: Database) -> None:
    """Before, verify parsed every payload and died on this one (JSONDecodeError)."""
    await _five(database)
    await _update(database, 4, payload='{"amount": "4.00"')
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 4 and report.records == 3


async def test_reordered_records_are_found(database: Database) -> None:
    """Records 2 and 3 swap places (their ids exchanged): the chain no longer links at 2."""
    await _five(database)
    async with database.engine.begin() as conn:
        await conn.execute(events.update().where(events.c.id == 2).values(id=-2))
        await conn.execute(events.update().where(events.c.id == 3).values(id=2))
        await conn.execute(events.update().where(events.c.id == -2).values(id=3))
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 2 and "link" in report.reason


async def test_an_inserted_record_is_found(database: Database) -> None:
    """A record slipped in at 3 (the later ones renumbered) does not link; one appended
    after a gap or outside the ids the chain uses is found too."""
    await _five(database)
    async with database.engine.connect() as conn:
        row = dict((await conn.execute(sa.select(events).where(events.c.id == 2))).one()._mapping)
    async with database.engine.begin() as conn:
        for record_id in range(5, 2, -1):
            await conn.execute(
                events.update().where(events.c.id == record_id).values(id=record_id + 1)
            )
        await conn.execute(events.insert().values({**row, "id": 3}))
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 3

    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events))
    await _five(database)
    async with database.engine.begin() as conn:
        await conn.execute(events.insert().values({**row, "id": 9}))
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 9 and "gap" in report.reason


@pytest.mark.parametrize("record_id", [0, -7])
async def test_a_record_below_the_first_id_is_found(database: Database, record_id: int) -> None:
    """Before, verify (and every reader) began after id 0: a row at id 0 or below sat in the
    table unseen and the chain verified."""
    await _five(database)
    async with database.engine.begin() as conn:
        await conn.execute(
            events.insert().values(
                id=record_id,
                ts="2026-01-01T00:00:00.000000+00:00",
                table_id="t1",
                round_id="R0",
                kind="payout",
                payload='{"amount":"500.00"}',
                prev_hash=GENESIS,
                hash="0" * 64,
            )
        )
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == record_id, report
    assert "before the first record" in report.reason


async def test_the_first_record_deleted_is_found(database: Database) -> None:
    await _five(database)
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id == 1))
    report = await EventLog(database).verify()
    assert not report.ok and report.first_bad_id == 2 and "expected id 1" in report.reason


def test_audit_verify_names_the_record_on_both_logs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def setup() -> None:
        async with Database(url) as db:
            await _five(db)
            admin = EventLog(db, admin_events)
            for i in range(3):
                await admin.append("users", "user.added", {"user": f"u{i}", "role": "pit"})
            async with db.engine.begin() as conn:
                await conn.execute(
                    events.update().where(events.c.id == 4).values(payload="not json")
                )
                await conn.execute(
                    admin_events.update()
                    .where(admin_events.c.id == 2)
                    .values(payload='{"role":"admin","user":"u1"}')
                )

    asyncio.run(setup())
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 1, result.output
    assert "chain BROKEN at record 4: content does not match its hash" in result.output
    assert "admin log BROKEN at record 2: content does not match its hash" in result.output


async def test_a_payload_that_cannot_be_canonical_is_refused_as_a_store_error(
    database: Database,
) -> None:
    """Keys of mixed types cannot be sorted: before, a TypeError from json escaped the
    append, which the controller (it rebuilds its table on a StoreError) does not handle."""
    log = await _five(database)
    with pytest.raises(StoreError, match="cannot be written as JSON"):
        await log.append("t1", "payout", {1: "a", "b": 2})
    await log.append("t1", "payout", {"amount": "6.00"})
    report = await EventLog(database).verify()
    assert report.ok and report.records == 6
