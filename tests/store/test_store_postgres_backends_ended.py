"""The pool's PostgreSQL connections ended by the server: the next append and read succeed.

A server restart, a failover, ``idle_session_timeout`` or an admin's
``pg_terminate_backend`` ends the backends of the connections the pool keeps idle. The
pool handed the first dead one out all the same: that append failed ("event log append
failed: connection is closed"; in the controller an input refused and its table rebuilt,
a REST bet an error, a console read an error) and only then did SQLAlchemy drop the pool.
Each connection is now tried as the pool hands it out (``pool_pre_ping``).
"""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa

from studio.store import Database, EventLog

pytestmark = pytest.mark.parametrize("database", ["postgres"], indirect=True)


async def _pooled_backends(database: Database, count: int) -> set[int]:
    """Leave ``count`` connections idle in the pool; their backends' pids."""
    pids: set[int] = set()
    both_open = asyncio.Barrier(count)

    async def hold() -> None:
        async with database.engine.connect() as conn:
            pids.add((await conn.execute(sa.text("SELECT pg_backend_pid()"))).scalar_one())
            await both_open.wait()  # all open at once: as many pooled connections

    await asyncio.gather(*(hold() for _ in range(count)))
    return pids


async def test_the_first_append_and_read_after_the_backends_ended_succeed(
    database: Database,
) -> None:
    log = EventLog(database)
    await log.append("t1", "test.append", {"i": 0})
    pids = await _pooled_backends(database, 3)
    assert len(pids) == 3
    admin = Database(database.url)  # a connection of its own, outside the pool
    try:
        async with admin.engine.begin() as conn:
            ended = await conn.execute(
                sa.text("SELECT pg_terminate_backend(pid) FROM unnest(CAST(:pids AS int[])) pid"),
                {"pids": sorted(pids)},
            )
            assert all(ended.scalars())
        # pg_terminate_backend only signals: until the backends are gone (pg_stat_activity
        # is read once a transaction: one each time).
        for _ in range(500):
            async with admin.engine.begin() as conn:
                left = await conn.execute(
                    sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(:pids)"),
                    {"pids": sorted(pids)},
                )
                if left.scalar_one() == 0:
                    break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the terminated backends did not end")
    finally:
        await admin.close()
    await log.append("t1", "test.append", {"i": 1})
    assert [r.payload["i"] for r in await log.read()] == [0, 1]
    await _pooled_backends(database, 3)  # every pooled connection is a live one again
    await log.append("t1", "test.append", {"i": 2})
    assert (await log.verify()).ok
    assert database.in_use == 0  # every connection tried and replaced was counted back
