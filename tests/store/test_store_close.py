"""Closing the database while a write is under way: the write commits first, nothing is lost.

A service stopping cancels the task that asked for an append; the append is shielded and
goes on. Before, ``Database.close()`` disposed of the pool at once: the append's connection
was left open, the event loop's end cut its transaction off (the record lost), and
aiosqlite's worker thread raised 'Event loop is closed' (PytestUnhandledThreadExceptionWarning
in the controller's end-to-end tests).
"""

from __future__ import annotations

import asyncio

import pytest

from studio.store import Database, EventLog
from studio.store.eventlog import events


async def test_close_waits_for_an_append_whose_caller_was_cancelled(database: Database) -> None:
    # The database under test is one of its own (the fixture's is still used at its teardown).
    db = Database(database.url, schema=database.schema)
    holder_db = Database(database.url, schema=database.schema)
    log = EventLog(db)
    await log.append("t1", "first", {"n": 1})
    try:
        async with holder_db.engine.connect() as holder:
            # Another writer holds the chain's lock: the append waits for it, in flight.
            await holder.begin()
            await holder_db.lock_writers(holder, events.name)
            caller = asyncio.create_task(log.append("t1", "in_flight", {"n": 2}))
            await asyncio.sleep(0.3)  # connected, waiting for the lock
            caller.cancel()  # the service that asked for it stops
            with pytest.raises(asyncio.CancelledError):
                await caller
            closing = asyncio.create_task(db.close())
            await asyncio.sleep(0.3)
            # Before, close() had returned already, the append's connection left behind.
            assert not closing.done()
            await holder.rollback()
        await asyncio.wait_for(closing, 10)
    finally:
        await holder_db.close()
    reopened = Database(database.url, schema=database.schema)
    try:
        records = await EventLog(reopened).read()
        assert [r.kind for r in records] == ["first", "in_flight"]
        assert (await EventLog(reopened).verify()).ok
    finally:
        await reopened.close()


async def test_close_gives_up_waiting_after_its_bound(database: Database) -> None:
    db = Database(database.url, schema=database.schema)
    async with db.engine.connect() as held:
        await held.exec_driver_sql("SELECT 1")
        # A connection its holder never gives back does not hold the stop for ever.
        await asyncio.wait_for(db.close(wait=0.2), 5)
        assert db.in_use == 1
