"""Waiting for a chain's writers' lock has a bound (PostgreSQL).

A writer whose transaction hung while holding the lock (a process stopped in a debugger,
a connection left open by a crashed request) made every other writer of that chain wait
until its connection closed: a console admin's change, `studio users`, the controller's
event log. Past ``writers_lock_timeout`` the waiting writer now gets a StoreError that
says so, writes nothing, and the chain stays intact. The test uses a small bound.
"""

from __future__ import annotations

import pytest

from studio.errors import StoreError
from studio.store import Database, Entry, EventLog
from studio.store.eventlog import admin_events

pytestmark = pytest.mark.parametrize("database", ["postgres"], indirect=True)


async def test_a_writer_behind_a_hung_holder_of_the_lock_is_refused_clearly(
    database: Database,
) -> None:
    log = EventLog(database, admin_events)
    await log.append("-", "user_added", {"user": "a"})
    waiting = Database(database.url, schema=database.schema, writers_lock_timeout=0.2)
    try:
        async with database.engine.connect() as holder:
            # The first writer takes the lock in a transaction it never ends (yet).
            await holder.begin()
            await database.lock_writers(holder, admin_events.name)
            with pytest.raises(StoreError) as refused:
                await EventLog(waiting, admin_events).append("-", "user_added", {"user": "b"})
            with pytest.raises(StoreError) as refused_batch:
                await EventLog(waiting, admin_events).append_batch(
                    [Entry("-", "user_added", {"user": "c"})]
                )
            await holder.rollback()
        # Once the holder's transaction has ended, the same writer appends at once.
        await EventLog(waiting, admin_events).append("-", "user_added", {"user": "d"})
    finally:
        await waiting.close()
    for caught in (refused, refused_batch):
        message = str(caught.value)
        assert "admin_log" in message and "writers' lock" in message, message
        assert "0.2 s" in message and "nothing was written" in message, message
        assert isinstance(caught.value.__cause__, Exception)  # the driver's error, kept
    records = await log.read()
    assert [r.payload["user"] for r in records] == ["a", "d"]
    report = await log.verify()
    assert report.ok and report.records == 2
