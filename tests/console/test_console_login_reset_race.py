"""A password set while a login with the old one is being checked (real app and database).

The login read the hash, verified it (argon2: slow, in a worker thread), then wrote its
success and started a session. A password set in between did not stop it: the old
password's session outlived the reset (the docs promise that setting a password ends
that user's sessions at once), and a login whose hash needed upgrading wrote the old
password's new hash over the one just set. The success is now written only if the hash
verified is still the account's, in the transaction that starts the session.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import httpx
from argon2 import PasswordHasher
from console_helpers import PASSWORD, form_token, login
from fastapi import FastAPI

from studio.console import UserStore
from studio.store import Database

NEW_PASSWORD = "a brand new password"


def _client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


def _hold_verify(store: UserStore) -> tuple[threading.Event, threading.Event]:
    """Make the login's password check (in its worker thread) wait once it has verified."""
    verified, release = threading.Event(), threading.Event()
    real: Callable[[str, str], bool] = store._verify

    def held(digest: str, password: str) -> bool:
        ok = real(digest, password)
        verified.set()
        release.wait(10)
        return ok

    store._verify = held  # type: ignore[method-assign]
    return verified, release


async def _login_during_reset(app: FastAPI, username: str) -> tuple[httpx.Response, bool]:
    """Log ``username`` in with the old password while an admin sets a new one."""
    store: UserStore = app.state.console_auth.users
    async with _client(app) as admin, _client(app) as victim:
        admin_token = await login(admin, "admin")
        page = await victim.get("/console/login")
        verified, release = _hold_verify(store)
        attempt = asyncio.create_task(
            victim.post(
                "/console/login",
                data={
                    "username": username,
                    "password": PASSWORD,
                    "csrf_token": form_token(page.text),
                },
            )
        )
        try:
            assert await asyncio.to_thread(verified.wait, 10)
            reset = await admin.post(
                f"/console/users/{username}/password",
                data={
                    "password": NEW_PASSWORD,
                    "reason": "a test of it",
                    "csrf_token": admin_token,
                },
                headers={"accept": "application/json"},
            )
            assert reset.status_code == 200, reset.text
        finally:
            release.set()
        response = await attempt
        del store._verify  # the real one again
        alive = (
            await victim.get("/console/fragments/overview")
            if "studio_session" in victim.cookies
            else None
        )
        return response, alive is not None and alive.status_code == 200


async def _logs_in(app: FastAPI, username: str, password: str) -> bool:
    async with _client(app) as http:
        page = await http.get("/console/login")
        response = await http.post(
            "/console/login",
            data={"username": username, "password": password, "csrf_token": form_token(page.text)},
        )
        return response.status_code == 303


async def test_a_password_set_during_a_login_refuses_that_login(
    app: FastAPI, people: UserStore
) -> None:
    response, alive = await _login_during_reset(app, "viewer")
    assert response.status_code == 401, response.status_code
    assert not alive
    attempts = await people.attempts("viewer", limit=1)
    assert attempts[0]["reason"] == "changed-during-login" and not attempts[0]["ok"]
    assert await _logs_in(app, "viewer", NEW_PASSWORD)
    assert not await _logs_in(app, "viewer", PASSWORD)


async def test_a_login_that_upgrades_the_hash_does_not_undo_a_password_set(
    app: FastAPI, database: Database, people: UserStore
) -> None:
    # A hash of other argon2 parameters than the console's: the login upgrades it.
    older = UserStore(database, hasher=PasswordHasher(time_cost=2, memory_cost=8 * 1024))
    await older.add("olduser", PASSWORD, "viewer", by="test")
    response, alive = await _login_during_reset(app, "olduser")
    assert response.status_code == 401 and not alive
    assert await _logs_in(app, "olduser", NEW_PASSWORD)
    assert not await _logs_in(app, "olduser", PASSWORD)
