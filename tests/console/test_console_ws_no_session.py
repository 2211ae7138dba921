"""A console page whose session is gone by the time its socket (re)connects is told so with
4401, the code on which console.js reloads to the login form."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import websockets
from console_double import InMemoryController
from console_helpers import context, login

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_console_socket_without_a_session_is_closed_with_4401(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    async with WebServer(create_app(context(database, fanout, controller)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/console/ws"
        async with httpx.AsyncClient(base_url=server.url) as http:
            csrf = await login(http, "viewer")
            cookie = {"Cookie": f"studio_session={http.cookies['studio_session']}"}
            # The page's socket dropped (a network blip, the server restarting); meanwhile
            # the session ended (here: logged out elsewhere; also expiry, user disabled).
            await http.post("/console/logout", headers={"X-CSRF-Token": csrf})
        for headers in (cookie, {}):
            # Before: the handshake was refused (HTTP 403), which a browser reports as
            # 1006; console.js took that for a network error and retried every 10 s for
            # good, the page frozen on "reconnecting" instead of showing the login form.
            async with websockets.connect(url, additional_headers=headers) as ws:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 5)  # nothing is sent before the close
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        assert fanout.listener_count == 0
