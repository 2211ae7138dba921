"""A SQLite database in memory (the demo may take one) used by several tasks at once.

SQLAlchemy gives ``sqlite:///:memory:`` one connection shared by every checkout (a
StaticPool): a read that ended while an append's transaction was open rolled that
transaction back as it gave the connection back, and the append's commit then committed
nothing. CI's demo test saw it as "record 3 does not chain: missing" (and another append's
"cannot start a transaction within a transaction"); records the controller had published
were not in the log. Each handle now keeps its in-memory database in a private scratch file,
removed when it closes, with the pool and transactions of a file's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from studio.store import Database
from studio.store.eventlog import EventLog


async def test_appends_beside_reads_all_land_and_chain() -> None:
    async with Database("sqlite:///:memory:") as db:
        log = EventLog(db)

        async def append(n: int) -> None:
            for i in range(n):
                await log.append("t1", "test.append", {"i": i})

        async def read(n: int) -> None:
            for _ in range(n):
                await log.read(after_id=0, limit=5)
                await asyncio.sleep(0)

        async with asyncio.TaskGroup() as tg:
            tg.create_task(append(60), name="append")
            for k in range(4):
                tg.create_task(read(60), name=f"read-{k}")
        records = await log.read(after_id=0, limit=1000)
        assert [r.id for r in records] == list(range(1, 61))
        assert [r.payload["i"] for r in records] == list(range(60))
        assert (await log.verify()).ok


async def test_the_scratch_file_goes_with_the_handle() -> None:
    db = Database("sqlite:///")
    async with db:
        await EventLog(db).append("t1", "test.append", {})
        scratch = db.scratch
        assert scratch is not None and scratch.exists()
    assert not scratch.exists()


async def test_a_file_database_has_no_scratch(tmp_path: Path) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        assert db.scratch is None
