"""An admin cannot disable themselves or change their own role, however the name is spelled."""

from __future__ import annotations

import httpx
import pytest
from console_helpers import login

from studio.console.users import Role, UserStore


@pytest.mark.parametrize("spelled", ["ADMIN", "Admin", " admin", "admin "])
async def test_an_admin_cannot_disable_themselves_under_another_spelling(
    client: httpx.AsyncClient, people: UserStore, spelled: str
) -> None:
    token = await login(client, "admin")
    response = await client.post(
        f"/console/users/{spelled}/active",
        data={"active": "no", "reason": "a test of it", "csrf_token": token},
    )
    assert "error=" in response.headers["location"]
    admin = await people.get("admin")
    # Before, the name was compared as typed but changed lower-cased and stripped: the
    # admin disabled themselves, lost their session, and the admin log said so.
    assert admin is not None and admin.active
    assert (await client.get("/console/users")).status_code == 200
    assert "user_disabled" not in [r.kind for r in await people.changes()]


@pytest.mark.parametrize("spelled", ["ADMIN", " admin"])
async def test_an_admin_cannot_change_their_own_role_under_another_spelling(
    client: httpx.AsyncClient, people: UserStore, spelled: str
) -> None:
    token = await login(client, "admin")
    response = await client.post(
        f"/console/users/{spelled}/role",
        data={"role": "viewer", "reason": "a test of it", "csrf_token": token},
    )
    assert "error=" in response.headers["location"]
    admin = await people.get("admin")
    assert admin is not None and admin.role is Role.ADMIN
