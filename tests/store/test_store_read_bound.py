"""A database that stops answering (bytes held, connections kept, no reset: a network
partition, a server blocked on its disk or a lock) under a read served to a reader (a
console page, a REST read) or an admin log change (a console user's, ``studio users``).

Until 2026-12-07 neither had a time limit of its own: a reader's read waited until the
controller stopped (its lock's watch, about 23 s in) or, the lock's checks still answered
(a table locked by an admin), until the database answered again; an admin change until TCP
gave up, about 15 min. Now a reader's read is cut short after ``Database.read_timeout``
(:class:`ReadTimedOut`, its connection closed, not given back to the pool), and an admin
change after ``Database.write_timeout``, as an event log append. The controller's own
reads (its start's and a rebuild's replay) keep no bound: a slow start must not fail.

PostgreSQL through a TCP proxy that stops forwarding (``PostgresProxy.stall``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import postgres_support
import pytest
import sqlalchemy as sa
from postgres_support import PostgresProxy
from sqlalchemy import event

from studio.errors import StoreError
from studio.store import Database, EventLog, RoundIndex
from studio.store.database import ReadTimedOut, serving_readers
from studio.store.eventlog import ADMIN_SCOPE, Entry, admin_events

READ_TIMEOUT = 3.0
WRITE_TIMEOUT = 3.0
# Closing a connection that stopped answering: asyncpg waits up to 2 s for its goodbye.
CLOSING = 2.5
STARTED = "2026-12-07T10:00:00.000000+00:00"


def stalling_database() -> AbstractAsyncContextManager[tuple[Database, PostgresProxy, Database]]:
    """A database through a proxy that can stall it, and a handle straight to it."""
    return postgres_support.stalling_database(
        read_timeout=READ_TIMEOUT, write_timeout=WRITE_TIMEOUT
    )


def dropped_connections(db: Database) -> list[BaseException | None]:
    """What each connection the pool drops from now on (invalidated) was dropped for."""
    dropped: list[BaseException | None] = []

    def invalidated(_dbapi: Any, _record: Any, exc: BaseException | None) -> None:
        dropped.append(exc)

    event.listen(db.engine.sync_engine, "invalidate", invalidated)
    return dropped


READS: dict[str, Callable[[Database], Awaitable[object]]] = {
    "round index": lambda db: RoundIndex(db).search(),
    "event log": lambda db: EventLog(db).read(),
    "chain walk": lambda db: EventLog(db).verify(),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("read", list(READS))
async def test_a_readers_read_that_gets_no_answer_is_cut_short(
    read: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with stalling_database() as (db, proxy, _direct):
        await RoundIndex(db).upsert("t1-R1", "t1", started=STARTED)
        await EventLog(db).append("t1", "in.test", {"n": 1})
        with serving_readers():
            await READS[read](db)  # answered: a connection in the pool
        dropped = dropped_connections(db)
        proxy.stall()
        loop = asyncio.get_running_loop()
        started = loop.time()
        with serving_readers(), pytest.raises(ReadTimedOut) as cut:
            async with asyncio.timeout(30):  # was: until the stall ended
                await READS[read](db)
        took = loop.time() - started
        assert str(cut.value) == (
            f"database read failed: the database gave no answer in {READ_TIMEOUT:g} s"
        )
        assert isinstance(cut.value, StoreError)  # a 503 to a REST reader
        assert READ_TIMEOUT <= took < READ_TIMEOUT + CLOSING, took
        # Closed, not given back to the pool as a sound one.
        assert len(dropped) == 1 and db.in_use == 0
        warned = [r for r in caplog.records if "no answer from the database" in r.message]
        assert [r.levelno for r in warned] == [logging.WARNING]
        proxy.resume()
        with serving_readers():
            assert [r["round_id"] for r in await RoundIndex(db).search()] == ["t1-R1"]
            assert [r.payload for r in await EventLog(db).read()] == [{"n": 1}]


@pytest.mark.timeout(60)
async def test_a_read_whose_database_stops_answering_as_it_ends_is_cut_short() -> None:
    """The SELECT answered, the ROLLBACK that gives the connection back does not: SQLAlchemy
    runs that to its end, cancelled or not, and it waited until the stall ended."""
    async with stalling_database() as (db, proxy, _direct):
        dropped = dropped_connections(db)
        with serving_readers(), pytest.raises(ReadTimedOut):
            async with asyncio.timeout(30):
                async with db.reading() as conn:
                    assert (await conn.execute(sa.select(sa.literal(1)))).scalar() == 1
                    proxy.stall()
        assert len(dropped) == 1 and db.in_use == 0
        proxy.resume()
        with serving_readers():
            async with db.reading() as conn:
                assert (await conn.execute(sa.select(sa.literal(2)))).scalar() == 2


@pytest.mark.timeout(60)
async def test_the_controllers_own_reads_have_no_bound() -> None:
    """A start's or a rebuild's replay is no reader's: a slow but sound database must not
    fail it. It waits for the database (the lock's watch stops a controller whose database
    stopped answering)."""
    async with stalling_database() as (db, proxy, _direct):
        await EventLog(db).append("t1", "in.test", {"n": 1})
        proxy.stall()
        replay = asyncio.create_task(EventLog(db).read(table_id="t1"))
        await asyncio.sleep(READ_TIMEOUT + CLOSING)
        assert not replay.done()
        proxy.resume()
        async with asyncio.timeout(10):
            assert [r.payload for r in await replay] == [{"n": 1}]


async def change(db: Database, user: str) -> Any:
    """An admin change (a console user's, ``studio users``): its work and its admin log
    record in one transaction."""

    async def work(conn: Any) -> int:
        return int((await conn.execute(sa.select(sa.literal(7)))).scalar_one())

    def entry(n: int) -> Entry:
        payload = {"user": user, "by": "test", "role": "viewer", "n": n}
        return Entry(ADMIN_SCOPE, "user_role_set", payload)

    return await EventLog(db, admin_events).append_with(work, entry)


@pytest.mark.timeout(60)
async def test_an_admin_change_that_gets_no_answer_is_refused() -> None:
    async with stalling_database() as (db, proxy, direct):
        assert await change(db, "ann") == 7
        proxy.stall()
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(StoreError) as refused:
            async with asyncio.timeout(30):  # was: until TCP gave up
                await change(db, "bob")
        took = loop.time() - started
        assert str(refused.value) == (
            f"admin_log: the change was not made: the database gave no answer in "
            f"{WRITE_TIMEOUT:g} s"
        )
        assert WRITE_TIMEOUT <= took < WRITE_TIMEOUT + CLOSING, took
        proxy.resume()
        assert await change(db, "cy") == 7
        logged = await EventLog(direct, admin_events).read()
        assert [r.payload["user"] for r in logged] == ["ann", "cy"]
        assert (await EventLog(direct, admin_events).verify()).ok


@pytest.mark.timeout(60)
@pytest.mark.parametrize("delivered", [True, False])
async def test_an_admin_change_whose_commit_got_no_answer_is_not_known(delivered: bool) -> None:
    """The COMMIT went out (``delivered``: the server committed) and no answer came: the
    change may have been made, and the message does not say it was not."""
    async with stalling_database() as (db, proxy, direct):
        proxy.stall_at_commit(delivered=delivered)
        with pytest.raises(StoreError) as unknown:
            async with asyncio.timeout(30):
                await change(db, "ann")
        assert str(unknown.value) == (
            f"admin_log: the database gave no answer in {WRITE_TIMEOUT:g} s to the change's "
            "commit: whether it was made is not known (the admin log says, once the "
            "database answers)"
        )
        if delivered:
            proxy.resume()
        else:
            await proxy.cut()  # the partition ends in a reset: the COMMIT held is lost
        logged = await EventLog(direct, admin_events).read()
        assert [r.payload["user"] for r in logged] == (["ann"] if delivered else [])


@pytest.mark.timeout(60)
async def test_an_admin_change_whose_commit_answer_is_lost_to_a_reset_is_read_back() -> None:
    """The connection reset as the COMMIT went out, which reached the server all the same
    (``lose_commit``): the change was made. It was said "not made", and the admin's retry
    logged it twice (['ann', 'ann']); now the record is looked for under the chain's lock."""
    async with stalling_database() as (db, proxy, direct):
        proxy.lose_commit(0.3)
        async with asyncio.timeout(30):
            assert await change(db, "ann") == 7  # made, and said so: no retry
        assert await change(db, "bob") == 7
        logged = await EventLog(direct, admin_events).read()
        assert [r.payload["user"] for r in logged] == ["ann", "bob"]
        assert (await EventLog(direct, admin_events).verify()).ok


@pytest.mark.timeout(60)
async def test_an_admin_change_whose_commit_is_reset_with_the_database_gone_is_not_known() -> None:
    """As above, but no new connection is taken from then on (the read back fails): whether
    the change was made is not known, and the message does not say it was not."""
    async with stalling_database() as (db, proxy, direct):
        server = proxy._server
        assert server is not None

        def refuse_new_connections(_conn: Any) -> None:
            server.close()  # those open go on: the COMMIT reaches the server

        event.listen(db.engine.sync_engine, "commit", refuse_new_connections)
        proxy.lose_commit(0.3)
        with pytest.raises(StoreError) as unknown:
            async with asyncio.timeout(30):
                await change(db, "ann")
        message = str(unknown.value)
        assert message.startswith("admin_log: the change's commit failed (")
        assert message.endswith(
            "): whether it was made is not known (the admin log says, once the database answers)"
        )
        assert "not made" not in message
        await asyncio.sleep(1)  # the COMMIT, late, has reached the server
        logged = await EventLog(direct, admin_events).read()
        assert [r.payload["user"] for r in logged] == ["ann"]
