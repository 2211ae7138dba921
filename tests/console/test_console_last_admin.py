"""Two admins demoting (or disabling) each other at once leave an admin (real app and database).

An admin cannot change their own role or disable themselves on the console, but each of
two admins could demote the other: both requests passed their role check before either
change was made, and the studio was left with no admin. The console's change is now
refused, in its own transaction, when it would leave no active admin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from console_helpers import PASSWORD, login
from fastapi import FastAPI

from studio.console import Role, UserStore


def _client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


def _meet_first(store: UserStore, method: str) -> None:
    """Hold each call of ``store.<method>`` until two have come: both past their role check."""
    real: Callable[..., Awaitable[Any]] = getattr(store, method)
    arrived: list[None] = []
    both = asyncio.Event()

    async def gated(*args: Any, **kwargs: Any) -> Any:
        arrived.append(None)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 10)
        return await real(*args, **kwargs)

    setattr(store, method, gated)


@pytest.mark.parametrize(
    ("path", "form", "method"),
    [("role", {"role": "manager"}, "set_role"), ("active", {"active": "no"}, "set_active")],
)
async def test_two_admins_at_once_leave_an_admin(
    app: FastAPI, people: UserStore, path: str, form: dict[str, str], method: str
) -> None:
    await people.add("admin2", PASSWORD, "admin", by="test")
    async with _client(app) as first, _client(app) as second:
        first_token = await login(first, "admin")
        second_token = await login(second, "admin2")
        _meet_first(app.state.console_auth.users, method)
        json = {"accept": "application/json"}
        answers = await asyncio.gather(
            first.post(
                f"/console/users/admin2/{path}",
                data=form | {"reason": "a test of it", "csrf_token": first_token},
                headers=json,
            ),
            second.post(
                f"/console/users/admin/{path}",
                data=form | {"reason": "a test of it", "csrf_token": second_token},
                headers=json,
            ),
        )
    assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
    refused = next(a for a in answers if a.status_code == 400)
    # The second in is refused: its admin was demoted (or disabled) by the first (since
    # 2026-12-07 checked first, in the change's transaction); were it not, the change
    # would leave no active admin ("... is the last active admin").
    assert refused.json()["detail"].endswith(
        "is no longer an active admin: the change was not made"
    )
    admins = [u for u in await people.all() if u.role == Role.ADMIN and u.active]
    assert len(admins) == 1
    # The refused change left no record in the admin log: one change, one record.
    changes = [c for c in await people.changes(limit=10) if c.kind != "user_added"]
    assert len(changes) == 1


async def test_the_shell_may_still_demote_the_last_admin(people: UserStore) -> None:
    # `studio users` can do anything (docs/console.md): the check is the console's.
    changed = await people.set_role("admin", "manager", by="shell:test")
    assert changed.role == Role.MANAGER


@pytest.mark.parametrize("then", ["disabled", "demoted"])
@pytest.mark.parametrize("change", ["add", "set_password"])
async def test_an_admin_disabled_or_demoted_after_the_role_check_changes_nothing(
    app: FastAPI, people: UserStore, then: str, change: str
) -> None:
    """The role is checked when a request starts; the change (here held, as a new
    password's hashing holds it most of a second) is made in a transaction of its own.
    Until 2026-12-07 an admin disabled or demoted in between still added an admin or set
    the other admin's password, logged after the disable."""
    await people.add("admin2", PASSWORD, "admin", by="test")
    real = getattr(people, change)
    checked, disabled = asyncio.Event(), asyncio.Event()

    async def held(*args: Any, **kwargs: Any) -> Any:
        checked.set()
        await asyncio.wait_for(disabled.wait(), 10)
        return await real(*args, **kwargs)

    setattr(app.state.console_auth.users, change, held)
    async with _client(app) as rogue:
        token = await login(rogue, "admin2")
        path, form = {
            "add": ("/console/users", {"username": "mallory", "password": PASSWORD + "x"}),
            "set_password": ("/console/users/admin/password", {"password": PASSWORD + "y"}),
        }[change]
        sent = asyncio.create_task(
            rogue.post(
                path,
                data=form | {"role": "admin", "reason": "rogue", "csrf_token": token},
                headers={"accept": "application/json"},
            )
        )
        await asyncio.wait_for(checked.wait(), 10)
        if then == "disabled":
            await people.set_active("admin2", False, by="console:admin", reason="rogue")
        else:
            await people.set_role("admin2", "viewer", by="console:admin", reason="rogue")
        disabled.set()
        answer = await sent
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == "admin2 is no longer an active admin: the change was not made"
    assert await people.get("mallory") is None
    # The newest record is the disable (or demotion): the refused change left none.
    (newest,) = await people.changes(limit=1)
    assert newest.kind == ("user_disabled" if then == "disabled" else "user_role_set")
