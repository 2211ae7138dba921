"""User administration lands in the hash-chained admin log, with who did it, on both databases."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from argon2 import PasswordHasher

from studio.console.users import UserError, UserStore
from studio.errors import StoreError, StudioError
from studio.store import Database, EventLog, eventlog
from studio.store.eventlog import ADMIN_SCOPE, admin_events

PASSWORD = "a long enough password"


def cheap() -> PasswordHasher:
    return PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


async def test_every_change_is_recorded_with_who_made_it(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    # No reason given (the store's callers that ask none: the demo, an admin's own
    # password): none recorded. The console and `studio users` require one.
    await store.add("nina", PASSWORD, "viewer", by="shell:root")
    await store.set_role("nina", "manager", by="console:boss", reason="shift lead")
    await store.set_password("nina", "another long password", by="console:boss", reason="forgot")
    await store.set_active("nina", False, by="console:boss", reason="on leave")
    await store.set_active("nina", True, by="shell:root", reason="back from leave")
    await store.unlock("nina", by="console:boss", reason="  locked out  ")

    records = await EventLog(database, admin_events).read()
    unlocked = {"before": {"locked_from": []}, "after": {"locked_from": []}}
    assert [(r.kind, r.payload) for r in records] == [
        (
            "user_added",
            {
                "user": "nina",
                "by": "shell:root",
                "role": "viewer",
                "before": None,
                "after": {"role": "viewer", "active": True},
            },
        ),
        (
            "user_role_set",
            {
                "user": "nina",
                "by": "console:boss",
                "reason": "shift lead",
                "role": "manager",
                "before": {"role": "viewer"},
                "after": {"role": "manager"},
            },
        ),
        (
            "user_password_set",
            {"user": "nina", "by": "console:boss", "reason": "forgot", **unlocked},
        ),
        (
            "user_disabled",
            {
                "user": "nina",
                "by": "console:boss",
                "reason": "on leave",
                "before": {"active": True},
                "after": {"active": False},
            },
        ),
        (
            "user_enabled",
            {
                "user": "nina",
                "by": "shell:root",
                "reason": "back from leave",
                "before": {"active": False},
                "after": {"active": True},
            },
        ),
        (
            "user_unlocked",
            {"user": "nina", "by": "console:boss", "reason": "locked out", **unlocked},
        ),
    ]
    # A reason too short is refused before anything is changed (the game actions' rule).
    with pytest.raises(StudioError, match="reason is required"):
        await store.set_role("nina", "admin", by="console:boss", reason=" ab ")
    assert {r.table_id for r in records} == {ADMIN_SCOPE}
    # Newest first, for the users page.
    assert [r.kind for r in await store.changes(limit=2)] == ["user_unlocked", "user_enabled"]
    report = await EventLog(database, admin_events).verify()
    assert report.ok and report.records == 6
    # The game's event log is a chain of its own and is not touched.
    assert (await EventLog(database).verify()).records == 0


async def test_a_refused_change_records_nothing_and_a_record_cannot_be_lost(
    database: Database,
) -> None:
    store = UserStore(database, hasher=cheap())
    await store.add("omar", PASSWORD, "viewer", by="test")
    with pytest.raises(UserError, match="already exists"):
        await store.add("omar", PASSWORD, "admin", by="test")
    with pytest.raises(UserError, match="no user"):
        await store.set_role("nobody", "admin", by="test")
    assert [r.kind for r in await store.changes()] == ["user_added"]

    # The record and the change are one transaction: when the record cannot be written,
    # the change is not made either.
    original = store.audit._insert_at_head

    async def broken(conn: object, entry: object) -> None:
        await original(conn, entry)  # type: ignore[arg-type]
        raise RuntimeError("disk gone")

    store.audit._insert_at_head = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await store.set_role("omar", "admin", by="test")
    user = await store.get("omar")
    assert user is not None and user.role.label == "viewer"
    assert [r.kind for r in await store.changes()] == ["user_added"]


async def test_concurrent_writers_keep_one_intact_chain(database: Database) -> None:
    # The console (in the controller) and `studio users` on the shell write the same chain
    # through their own connections: every change is recorded once, the chain links.
    other = Database(database.url, schema=database.schema)
    try:
        console = UserStore(database, hasher=cheap())
        shell = UserStore(other, hasher=cheap())
        names = [f"user{i:02d}" for i in range(16)]
        await asyncio.gather(
            *(
                (console if i % 2 else shell).add(name, PASSWORD, "viewer", by=f"w{i % 2}")
                for i, name in enumerate(names)
            )
        )
        await asyncio.gather(
            *(
                (shell if i % 2 else console).set_role(name, "dealer", by="x")
                for i, name in enumerate(names)
            )
        )
    finally:
        await other.close()
    log = EventLog(database, admin_events)
    records = await log.read()
    assert sorted(r.payload["user"] for r in records if r.kind == "user_added") == names
    assert sorted(r.payload["user"] for r in records if r.kind == "user_role_set") == names
    report = await log.verify()
    assert report.ok and report.records == 32
    async with database.engine.connect() as conn:
        total = (await conn.execute(sa.select(sa.func.count()).select_from(admin_events))).scalar()
    assert total == 32


@contextlib.contextmanager
def write_lock_held(path: Path, seconds: float) -> Iterator[None]:
    """Another writer holds SQLite's write lock for ``seconds`` (longer than the driver waits
    for it: 5 s by default, less with the URL's ``timeout``), as a busy `studio users` or
    controller would."""
    taken = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        taken.set()
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    try:
        yield
    finally:
        holder.join()


async def test_a_busy_sqlite_database_neither_leaks_the_hash_nor_half_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "studio.db"
    # The driver waits 0.5 s for the write lock (its URL's timeout) instead of 5.
    async with Database(f"sqlite:///{path}?timeout=0.5") as database:
        store = UserStore(database, hasher=cheap())
        await store.add("nina", PASSWORD, "viewer", by="test")
        # One attempt only: the write lock outlasts it. Before, SQLAlchemy's own error
        # came out (a traceback from `studio users passwd`, a 500 on the console) with
        # the UPDATE's parameters in its text: the new password's argon2 hash.
        monkeypatch.setattr(eventlog, "APPEND_ATTEMPTS", 1)
        with write_lock_held(path, 1.5), pytest.raises(StoreError) as refused:
            await store.set_password("nina", "another long password", by="test")
        assert "argon2" not in str(refused.value) and "database is locked" in str(refused.value)
        assert refused.value.__cause__ is None and refused.value.__suppress_context__
        await store.authenticate("nina", PASSWORD)  # nothing changed, nothing recorded
        assert [r.kind for r in await store.changes()] == ["user_added"]


async def test_a_change_that_found_sqlite_busy_is_run_again(tmp_path: Path) -> None:
    path = tmp_path / "studio.db"
    # The driver waits 1 s for the write lock (its URL's timeout) instead of 5.
    async with Database(f"sqlite:///{path}?timeout=1") as database:
        store = UserStore(database, hasher=cheap())
        await store.add("nina", PASSWORD, "viewer", by="test")
        with write_lock_held(path, 1.8):
            # Busy past the driver's wait on the first attempt; the next one gets the lock.
            await store.set_password("nina", "another long password", by="test")
        await store.authenticate("nina", "another long password")
        assert [r.kind for r in await store.changes()] == ["user_password_set", "user_added"]
        assert (await EventLog(database, admin_events).verify()).ok
