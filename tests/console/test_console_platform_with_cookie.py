"""A platform-token request that also carries a studio_session cookie (console double).

The CSRF check applied to every non-GET request with a session cookie, so the game
platform's client whose cookie jar had kept one (even a stale one) was refused 403
"CSRF token missing or invalid" on its commands. A request that authenticates with the
platform's bearer token (a header a browser never adds by itself) is no forgery: the
check is skipped for it. With a wrong token it still applies.
"""

from __future__ import annotations

from typing import Any

import httpx
from console_double import InMemoryController
from console_helpers import context, login

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app

TOKEN = "platform-token"
BET = {"command_id": "c-1", "player": "p-1", "seat": 1, "stake": "10"}


async def test_platform_commands_ignore_a_session_cookie(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    received: list[dict[str, Any]] = []

    async def submit_command(table: str, body: dict[str, Any]) -> dict[str, Any]:
        received.append(body)
        return {"accepted": True, "command_id": body["command_id"]}

    controller.submit_command = submit_command  # type: ignore[attr-defined]
    ctx = context(database, fanout, controller)
    ctx.extras["platform_token"] = TOKEN
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "viewer")  # a live session cookie in the jar
        live = await http.post(
            "/api/tables/bj1/bets", json=BET, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert live.status_code == 200, live.text
        http.cookies.clear()
        http.cookies.set("studio_session", "stale-session", domain="testserver.local")
        stale = await http.post(
            "/api/tables/bj1/bets",
            json=BET | {"command_id": "c-2"},
            headers={"Authorization": f"bearer {TOKEN}"},
        )
        assert stale.status_code == 200, stale.text
        # A wrong token does not get past the CSRF check.
        wrong = await http.post(
            "/api/tables/bj1/bets",
            json=BET | {"command_id": "c-3"},
            headers={"Authorization": f"Bearer {TOKEN}x"},
        )
        assert wrong.status_code == 403 and "CSRF" in wrong.json()["detail"]
    assert [b["command_id"] for b in received] == ["c-1", "c-2"]
