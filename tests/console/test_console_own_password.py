"""An admin who sets their own password ends their other sessions, keeping the one used."""

from __future__ import annotations

import httpx
from console_helpers import login
from fastapi import FastAPI

NEW_PASSWORD = "a brand new passphrase"


async def test_setting_your_own_password_ends_your_other_sessions(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as here,
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as stolen,
    ):
        token = await login(here, "admin")
        await login(stolen, "admin")  # another browser, or a copied cookie
        assert (await stolen.get("/console/users")).status_code == 200
        changed = await here.post(
            "/console/users/admin/password", data={"password": NEW_PASSWORD, "csrf_token": token}
        )
        assert changed.status_code == 303 and "notice=" in changed.headers["location"]
        # Before, only another user's password ended sessions: the admin's own other
        # sessions outlived the change meant to shut them out (security.md: "setting a
        # user's password ... ends that user's sessions").
        assert (await stolen.get("/console/fragments/overview")).status_code == 401
        # The session that made the change stays: the admin is not logged out mid-task.
        assert (await here.get("/console/users")).status_code == 200
        again = await here.post(
            "/console/users/admin/password", data={"password": NEW_PASSWORD, "csrf_token": token}
        )
        assert "notice=" in again.headers["location"]
