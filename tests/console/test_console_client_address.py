"""Which address a login attempt counts against (the per-address throttle, the users page)."""

from __future__ import annotations

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import context, form_token

from studio.console import UserStore
from studio.console.users import mask_name
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_connection_from_this_host_may_name_the_client_address(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    # What security.md says: uvicorn trusts X-Forwarded-For from 127.0.0.1 (a proxy on this
    # host), so such a proxy must set or append it, never pass a client's own on. Before,
    # the doc said a proxy's clients all shared its address unless uvicorn was told.
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            page = await http.get("/console/login")
            form = {"username": "nobody", "password": "wrong", "csrf_token": form_token(page.text)}
            for forwarded in ("203.0.113.7", None):
                headers = {"X-Forwarded-For": forwarded} if forwarded else {}
                answer = await http.post("/console/login", data=form, headers=headers)
                assert answer.status_code == 401
    # "nobody" is no user: recorded masked (a password typed as the name stays unseen).
    remotes = [a["remote"] for a in await people.attempts(mask_name("nobody"))]
    assert remotes == ["127.0.0.1", "203.0.113.7"]  # newest first
