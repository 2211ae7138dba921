"""Between walks of the whole log, the shared chain check walks only what was appended
since the last sound check: a log that grows all shift made every check longer (52,000
records: 1.1 s a check, 30 s apart, on the controller's event loop). What the short walk
cannot see, a full walk (hourly, or a manager's re-verify) does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from studio.store import Database, EventLog
from studio.store.eventlog import Entry, events
from studio.web import audit as web_audit
from studio.web.audit import SharedChainCheck


@pytest.fixture(autouse=True)
def _uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_audit, "CACHE_SECONDS", 0.0)  # each check() walks


class CountedLog(EventLog):
    """An event log that counts the rows its walks read."""

    rows_read = 0

    async def _raw_rows(self, batch: int = 5000, after: int | None = None) -> AsyncIterator[Any]:
        async for row in super()._raw_rows(batch, after):
            self.rows_read += 1
            yield row


async def _grown(database: Database, n: int, start: int = 0) -> None:
    entries = [Entry("bj1", "test.record", {"n": i}) for i in range(start, start + n)]
    await EventLog(database).append_batch(entries)


async def test_a_check_after_a_sound_one_walks_only_what_was_appended(database: Database) -> None:
    await _grown(database, 300)
    log = CountedLog(database)
    chains = SharedChainCheck(log)
    first = await chains.check()
    assert first.events.ok and first.events.records == 300 and log.rows_read == 300
    await _grown(database, 20, start=300)
    log.rows_read = 0
    second = await chains.check()
    assert second.events.ok and second.events.records == 320
    assert second.events.head_id == 320 and log.rows_read == 20
    assert second.full_checked_at == first.full_checked_at
    # The head it reports is the whole chain's, as a full walk finds it.
    assert (second.events.head_id, second.events.head) == (
        (full := await EventLog(database).verify()).head_id,
        full.head,
    )


async def test_a_tail_deleted_or_rewritten_since_the_last_check_is_found(
    database: Database,
) -> None:
    await _grown(database, 50)
    chains = SharedChainCheck(EventLog(database))
    assert (await chains.check()).events.ok
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id > 45))
    cut = await chains.check()
    assert not cut.events.ok and cut.events.first_bad_id == 50
    assert "deleted from the log's end" in cut.events.reason
    # Not resumed from a bad check: the next walks the whole log again, and finds it sound
    # as it now stands (a shorter chain: only an anchor kept elsewhere tells the cut).
    again = await chains.check()
    assert again.events.ok and again.events.records == 45


async def test_a_head_rewritten_is_found(database: Database) -> None:
    await _grown(database, 10)
    chains = SharedChainCheck(EventLog(database))
    assert (await chains.check()).events.ok
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(events).where(events.c.id == 10).values(hash="0" * 64))
    rewritten = await chains.check()
    assert not rewritten.events.ok and rewritten.events.first_bad_id == 10
    assert "differs from the head an earlier check found sound" in rewritten.events.reason


async def test_an_old_record_edited_is_found_by_the_full_walk(database: Database) -> None:
    await _grown(database, 10)
    chains = SharedChainCheck(EventLog(database), full_seconds=3600)
    assert (await chains.check()).events.ok
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(events).where(events.c.id == 3).values(payload='{"n": 99}'))
    # The short walk starts after record 10: it cannot see record 3.
    assert (await chains.check()).events.ok
    # A manager's re-verify, or the hourly full walk, does.
    forced = await chains.check(force=True)
    assert not forced.events.ok and forced.events.first_bad_id == 3
    chains = SharedChainCheck(EventLog(database), full_seconds=0.0)
    assert not (await chains.check()).events.ok


async def test_a_record_deleted_before_the_head_is_found_by_the_short_check(
    database: Database,
) -> None:
    # A review: the short check looked at the head and what followed only.
    await _grown(database, 10)
    chains = SharedChainCheck(EventLog(database))
    assert (await chains.check()).events.ok
    async with database.engine.begin() as conn:
        await conn.execute(sa.delete(events).where(events.c.id == 4))
    short = await chains.check()
    assert not short.events.ok and "holds 9 records up to record 10" in short.events.reason


async def test_a_manager_asking_during_a_short_check_gets_a_full_walk(database: Database) -> None:
    # A review: a forced check joined the short one under way and answered with it.
    await _grown(database, 10)
    chains = SharedChainCheck(EventLog(database))
    assert (await chains.check()).events.ok
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(events).where(events.c.id == 3).values(payload='{"n": 9}'))
    short = asyncio.create_task(chains.check())
    await asyncio.sleep(0)  # under way
    forced = await chains.check(force=True)
    assert (await short).events.ok  # it cannot see record 3
    assert not forced.events.ok and forced.events.first_bad_id == 3
