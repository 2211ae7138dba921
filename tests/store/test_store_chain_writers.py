"""Several processes append to one hash chain at once, as the console and `studio users` do."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import sqlalchemy as sa
from process_support import wait_line

from studio.console.users import users_table
from studio.store import Database, Entry, EventLog
from studio.store.eventlog import admin_events

WRITER = Path(__file__).with_name("chain_writer.py")


async def run_writers(
    database: Database, writers: int, users: int, changes: int
) -> list[dict[str, object]]:
    """Start ``writers`` processes, let them all go at once, and collect their summaries."""
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(WRITER),
            database.url,
            database.schema or "",
            f"w{n}",
            str(users),
            str(changes),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for n in range(writers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            await wait_line(proc.stdout, "ready")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        outputs = await asyncio.gather(*(proc.communicate() for proc in procs))
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert [proc.returncode for proc in procs] == [0] * writers
    return [json.loads(out.decode().splitlines()[-1]) for out, _ in outputs]


async def test_every_change_of_many_concurrent_writers_lands(database: Database) -> None:
    """Six processes, each changing six accounts at once, 144 changes in all. On PostgreSQL
    a change read the head, lost the race for the next id to another writer and ran again;
    after 8 lost races it was refused (11 to 17 of the 36 accounts had one refused, in
    three runs). Now the writers take turns and every change lands, once, in one chain."""
    writers, users, changes = 6, 6, 4
    summaries = await run_writers(database, writers, users, changes)
    assert [s["refused"] for s in summaries] == [[]] * writers
    assert [s["made"] for s in summaries] == [users * changes] * writers
    log = EventLog(database, admin_events)
    records = await log.read()
    assert len(records) == writers * users * changes
    for n in range(writers):
        for i in range(users):
            user = f"w{n}-{i:02d}"
            mine = [(r.kind, r.payload.get("role")) for r in records if r.payload["user"] == user]
            # Each account's changes are in the chain once, in the order they were made.
            roles = ["dealer" if k % 2 else "manager" for k in range(changes - 1, 0, -1)]
            assert mine == [("user_added", "viewer")] + [("user_role_set", r) for r in roles]
    report = await log.verify()
    assert report.ok and report.records == writers * users * changes
    async with database.engine.connect() as conn:
        total = (await conn.execute(sa.select(sa.func.count()).select_from(admin_events))).scalar()
        roles = (await conn.execute(sa.select(users_table.c.role))).scalars().all()
    assert total == writers * users * changes
    assert roles == ["dealer"] * (writers * users)  # every change recorded was made


async def test_the_event_log_takes_turns_with_another_writer(database: Database) -> None:
    """The controller's event log kept its head in memory: once another writer (a second
    process on the same database) appended, its next append hit the taken id and failed,
    and the controller refused that input. It reads the head under the chain's lock now."""
    other = Database(database.url, schema=database.schema)
    try:
        controller, second = EventLog(database), EventLog(other)
        await controller.append("t1", "shoe.card", {"n": 1})
        await second.append("t1", "controller.started", {"n": 2})
        await controller.append("t1", "shoe.card", {"n": 3})  # was: StoreError, id 2 taken
        await asyncio.gather(
            *(
                (controller if n % 2 else second).append_batch(
                    [Entry("t1", "shoe.card", {"n": n, "i": i}) for i in range(3)]
                )
                for n in range(4, 24)
            )
        )
    finally:
        await other.close()
    records = await EventLog(database).read()
    assert [r.payload["n"] for r in records[:3]] == [1, 2, 3]
    assert sorted((r.payload["n"], r.payload["i"]) for r in records[3:]) == [
        (n, i) for n in range(4, 24) for i in range(3)
    ]
    # Each batch is one transaction: its records are next to each other.
    for first in range(3, len(records), 3):
        assert len({r.payload["n"] for r in records[first : first + 3]}) == 1
    report = await EventLog(database).verify()
    assert report.ok and report.records == 3 + 20 * 3
