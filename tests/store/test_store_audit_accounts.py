"""``studio audit verify`` replays the admin log into each account's role and whether it
is enabled, and compares the users table with it (a review: a role set in SQL, an admin
row inserted, or every admin-log record deleted, all passed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from argon2 import PasswordHasher
from sql_support import run_sql
from typer.testing import CliRunner

from studio.cli import app
from studio.console.users import UserStore, users_table
from studio.store import Database
from studio.store.eventlog import admin_events


def _accounts(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def add() -> None:
        async with Database(url) as db:
            store = UserStore(
                db, hasher=PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
            )
            await store.add("boss", "a long password 1", "admin", by="setup")
            await store.add("ann", "a long password 2", "dealer", by="boss")
            await store.set_role("ann", "manager", by="boss")
            await store.set_active("ann", False, by="boss")
            await store.set_active("ann", True, by="boss")
            await store.add("bob", "a long password 3", "viewer", by="boss")
            await store.set_active("bob", False, by="boss")

    asyncio.run(add())
    return url


def _verify(url: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    return result.exit_code, result.output


def test_accounts_made_through_the_console_agree(tmp_path: Path) -> None:
    code, output = _verify(_accounts(tmp_path))
    assert code == 0, output
    assert "accounts OK: 3 accounts agree with the admin log" in output


def test_a_role_set_in_sql_is_found(tmp_path: Path) -> None:
    url = _accounts(tmp_path)
    users = users_table.c
    run_sql(url, sa.update(users_table).where(users.username == "ann").values(role="admin"))
    run_sql(url, sa.update(users_table).where(users.username == "bob").values(active=True))
    code, output = _verify(url)
    assert code == 1, output
    assert "accounts: 2 disagreements with the admin log (3 accounts)" in output
    assert "  account ann: role admin, the admin log says manager" in output
    assert "  account bob: enabled, the admin log says disabled" in output


def test_an_account_inserted_in_sql_is_found(tmp_path: Path) -> None:
    url = _accounts(tmp_path)
    run_sql(
        url,
        users_table.insert().values(
            username="mallory",
            password_hash="x",
            role="admin",
            active=True,
            failed_logins=0,
            created_at="2026-12-01T00:00:00+00:00",
        ),
    )
    code, output = _verify(url)
    assert code == 1, output
    assert "  account mallory: admin, enabled: the admin log has no record of this account" in (
        output
    )


def test_an_emptied_admin_log_is_found(tmp_path: Path) -> None:
    url = _accounts(tmp_path)
    run_sql(url, sa.delete(admin_events))
    code, output = _verify(url)
    assert code == 1, output
    assert "admin log OK: 0 records" in output  # the chain alone cannot tell
    assert "accounts: 3 disagreements with the admin log (3 accounts)" in output


def test_an_account_deleted_in_sql_is_found(tmp_path: Path) -> None:
    url = _accounts(tmp_path)
    run_sql(url, sa.delete(users_table).where(users_table.c.username == "bob"))
    code, output = _verify(url)
    assert code == 1, output
    assert "  account bob: added in the admin log, not in the users table" in output


async def test_each_database_replays_the_same(database: Database) -> None:
    """SQLite and PostgreSQL (its ``active`` a boolean, SQLite's an integer)."""
    from studio.store import EventLog
    from studio.store.accounts import check_accounts

    store = UserStore(
        database, hasher=PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    )
    await store.add("ann", "a long password 2", "dealer", by="boss")
    await store.set_active("ann", False, by="boss")
    report = await check_accounts(database, EventLog(database, admin_events))
    assert report.ok and report.accounts == 1, report.problems
    async with database.engine.begin() as conn:
        await conn.execute(sa.update(users_table).values(role="admin", active=True))
    report = await check_accounts(database, EventLog(database, admin_events))
    assert report.problems == [
        ("ann", "role admin, the admin log says dealer"),
        ("ann", "enabled, the admin log says disabled"),
    ]
