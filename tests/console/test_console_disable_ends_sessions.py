"""Disabling an account ends its sessions, whoever disables it (real app and database).

Until 2026-12-07 only the console's disable form deleted the sessions: ``studio users
disable`` (and ``UserStore.set_active`` called from code) only marked the account
inactive, and a session was refused while the account stayed so. Enabled again before
the session's next request, the old cookie (perhaps the stolen one the account was
disabled for) worked again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from console_double import InMemoryController
from console_helpers import PASSWORD, ROLES, context, fast_hasher, login
from typer.testing import CliRunner

from studio.cli import app as cli
from studio.console import UserStore
from studio.console.auth import sessions_table
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app

OVERVIEW = "/console/fragments/overview"


async def sessions_of(database: Database, user_id: int) -> int:
    async with database.engine.connect() as conn:
        rows = await conn.execute(
            sessions_table.select().where(sessions_table.c.user_id == user_id)
        )
        return len(rows.all())


async def test_set_active_ends_the_sessions_in_the_store(
    client: httpx.AsyncClient, people: UserStore, database: Database
) -> None:
    await login(client, "dealer")
    assert (await client.get(OVERVIEW)).status_code == 200
    dealer = await people.get("dealer")
    assert dealer is not None and await sessions_of(database, dealer.id) == 1
    await people.set_active("dealer", False, by="test")
    await people.set_active("dealer", True, by="test")
    # No request between the two: the old cookie is refused all the same.
    assert (await client.get(OVERVIEW)).status_code == 401
    assert await sessions_of(database, dealer.id) == 0
    # Enabling ends nothing: the dealer logs in again and stays logged in.
    await login(client, "dealer")
    await people.set_active("dealer", True, by="test")
    assert (await client.get(OVERVIEW)).status_code == 200


async def test_studio_users_disable_then_enable_leaves_the_old_cookie_dead(
    tmp_path: Path, fanout: Fanout, controller: InMemoryController
) -> None:
    url = f"sqlite:///{tmp_path}/shell.db"
    runner = CliRunner()

    def shell(*args: str) -> str:
        result = runner.invoke(cli, ["users", *args, "--reason", "a test of it", "--database", url])
        assert result.exit_code == 0, result.output
        return result.output

    async with Database(url) as database:
        store = UserStore(database, hasher=fast_hasher())
        for role in ROLES:
            await store.add(role, PASSWORD, role, by="test")
        web = create_app(context(database, fanout, controller))
        transport = httpx.ASGITransport(app=web)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            await login(http, "dealer")
            assert (await http.get(OVERVIEW)).status_code == 200
            # The shell runs its own event loop (asyncio.run): off this one, in a thread.
            disabled = await asyncio.to_thread(shell, "disable", "dealer")
            enabled = await asyncio.to_thread(shell, "enable", "dealer")
            assert (await http.get(OVERVIEW)).status_code == 401
    assert "dealer disabled; its open sessions ended" in disabled
    assert "dealer enabled" in enabled
