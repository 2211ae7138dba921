"""A database that stops answering: bytes held, connections kept, no reset (a network
partition, a server blocked on its disk). A crash review: the lock's watch and the event
log's appends had no time limit, so the controller froze, silent, until TCP gave up (about
15 min): no line logged, no alert, its REST state hanging.

Now a check of a watched lock that gets no answer in time is a failed try (three in a row:
the lock is lost, the holder stops), an append is bounded (``Database.write_timeout``):
one whose commit was not sent is refused, one whose commit got no answer is
:class:`AppendUnconfirmed` (the log decides once it answers), and a write that waits for
the database more than ``SLOW_WRITE`` s says so at once.

PostgreSQL through a TCP proxy that stops forwarding (``PostgresProxy.stall``); SQLite and
PostgreSQL for the slow write (another writer holding the write lock)."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager

import postgres_support
import pytest
from postgres_support import PostgresProxy

from studio.errors import AppendUnconfirmed, LockLost, StoreError
from studio.store import Database, EventLog
from studio.store import database as module
from studio.store.eventlog import Entry

NAME = "studio controller"
WRITE_TIMEOUT = 3.0


def stalling_database() -> AbstractAsyncContextManager[tuple[Database, PostgresProxy, Database]]:
    """A database through a proxy that can stall it, and a handle straight to it."""
    return postgres_support.stalling_database(writers_lock_timeout=1, write_timeout=WRITE_TIMEOUT)


@pytest.mark.timeout(60)
async def test_a_watched_lock_whose_database_stops_answering_is_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with stalling_database() as (db, proxy, _direct):
        held = asyncio.Event()

        async def holder() -> None:
            async with db.exclusive(NAME, watch=0.05):
                held.set()
                await asyncio.sleep(120)

        task = asyncio.create_task(holder())
        await held.wait()
        await asyncio.sleep(0.3)  # a few checks answered
        proxy.stall()
        with pytest.raises(LockLost) as lost:
            async with asyncio.timeout(45):  # was: until TCP gave up
                await task
        tries = module.LOCK_CHECK_TRIES
        assert str(lost.value).endswith(
            f"its check got no answer in {tries} tries of {module.LOCK_CHECK_TIMEOUT:g} s "
            "(the database stopped answering)"
        ), lost.value
        warned = [r for r in caplog.records if "lock's check got no answer" in r.message]
        assert len(warned) == tries - 1 and warned[0].levelno == logging.WARNING


@pytest.mark.timeout(60)
async def test_an_append_stalled_before_its_commit_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with stalling_database() as (db, proxy, direct):
        log = EventLog(db)
        await log.append("t1", "in.test", {"n": 1})
        proxy.stall()
        with pytest.raises(StoreError) as refused:
            async with asyncio.timeout(30):
                await log.append("t1", "in.test", {"n": 2})
        assert not isinstance(refused.value, AppendUnconfirmed)
        assert str(refused.value) == (
            f"event log append failed: the database gave no answer in {WRITE_TIMEOUT:g} s"
        )
        assert "event log append (in.test on t1): no answer from the database after 2 s" in (
            caplog.text
        )
        # How it ended, truthfully: until 2026-12-07 "ended after 3.0 s", which the runbook
        # read as written (an operations drill: the write was lost with the database).
        said = [r.message for r in caplog.records if r.name == "studio.store.eventlog"]
        assert len(said) == 2 and said[0].startswith("event log append (in.test on t1): no "), said
        assert said[1].startswith("event log append (in.test on t1): failed (TimeoutError) after ")
        proxy.resume()
        await log.append("t1", "in.test", {"n": 3})
        assert [r.payload["n"] for r in await EventLog(direct).read()] == [1, 3]
        assert (await EventLog(direct).verify()).ok


@pytest.mark.timeout(60)
@pytest.mark.parametrize("delivered", [True, False])
async def test_an_append_whose_commit_got_no_answer_is_unconfirmed(delivered: bool) -> None:
    """The COMMIT went out (``delivered``: the server committed) and no answer came: whether
    it committed is not known while the database does not answer; the log tells after."""
    async with stalling_database() as (db, proxy, direct):
        log = EventLog(db)
        await log.append("t1", "in.test", {"n": 1})
        proxy.stall_at_commit(delivered=delivered)
        with pytest.raises(AppendUnconfirmed) as unconfirmed:
            async with asyncio.timeout(30):
                await log.append("t1", "in.test", {"n": 2})
        assert "the database gave no answer in 3 s; whether it committed is not known" in str(
            unconfirmed.value
        )
        if delivered:
            proxy.resume()
        else:
            await proxy.cut()  # the partition ends in a reset: the COMMIT held is lost
        held = await EventLog(direct).holds(*unconfirmed.value.records)
        assert [r.payload["n"] for r in held] == ([2] if delivered else [])
        expected = [1, 2] if delivered else [1]
        assert [r.payload["n"] for r in await EventLog(direct).read()] == expected


@pytest.mark.timeout(60)
async def test_a_write_that_waits_long_for_the_database_says_so(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Another writer holds the write lock (SQLite's, the chain's writers' lock on
    PostgreSQL) for 2.5 s: the append waits, says so at 2 s, and is written."""
    log = EventLog(database)
    await log.append("t1", "in.test", {"n": 1})
    locked, release = asyncio.Event(), asyncio.Event()

    async def other_writer() -> None:
        async with database.engine.begin() as conn:
            await database.lock_writers(conn, log.table.name)
            locked.set()
            await release.wait()

    holder = asyncio.create_task(other_writer())
    await locked.wait()
    asyncio.get_running_loop().call_later(module.SLOW_WRITE + 0.5, release.set)
    (record,) = await log.append_batch([Entry("t1", "in.test", {"n": 2})])
    await holder
    assert record.payload == {"n": 2}
    warned = [r for r in caplog.records if r.name == "studio.store.eventlog"]
    assert [r.levelno for r in warned] == [logging.WARNING, logging.WARNING]
    assert warned[0].message == (
        f"event log append (in.test on t1): no answer from the database after 2 s; waiting "
        f"up to {database.write_timeout:g} s"
    )
    assert warned[1].message.startswith("event log append (in.test on t1): went through after 2.")
    assert (await log.verify()).ok


async def test_the_write_timeout_is_a_number_of_seconds() -> None:
    with pytest.raises(StoreError, match="write_timeout is a number of seconds > 0"):
        Database("sqlite:///:memory:", write_timeout=0)
    db = Database("sqlite:///:memory:", writers_lock_timeout=2)
    try:
        assert db.write_timeout == 2 + module.WRITE_MARGIN
    finally:
        await db.close()
