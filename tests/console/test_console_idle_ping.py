"""An idle console WebSocket gets ``{"channel":"ping"}`` (docs/console.md, *Live updates*).

A proxy or a browser may drop a socket that carries nothing for a while; the console's
stream sends a ping of its own when no message came for ``KEEPALIVE_SECONDS``, and
``console.js`` ignores it. The server, the database and the fan-out are the real ones;
the interval is made small so an idle stream pings at once.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import httpx
import pytest
import websockets
from console_double import InMemoryController
from console_helpers import context, login

from studio.console import pages
from studio.contract import RoundEvent
from studio.store import Database
from studio.streams import Channel, Fanout
from studio.web import WebServer, create_app
from studio.web import streams as web_streams

pytestmark = pytest.mark.parametrize("database", ["sqlite"], indirect=True)

PING = '{"channel":"ping"}'


async def test_an_idle_console_websocket_is_pinged_and_still_streams(
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    people: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_streams, "KEEPALIVE_SECONDS", 0.05)
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            await login(http, "viewer")
            cookie = f"studio_session={http.cookies['studio_session']}"
        url = f"ws://127.0.0.1:{server.port}/console/ws"
        async with websockets.connect(url, additional_headers={"Cookie": cookie}) as ws:
            received: list[str] = []
            async with asyncio.timeout(10):
                # First the snapshots of the tables (if any), then, idle, the pings.
                while received.count(PING) < 2:
                    received.append(str(await ws.recv()))
            # A ping does not end or disturb the stream: the next message still comes.
            await fanout.emit(
                "bj1",
                Channel.ROUND_EVENTS,
                RoundEvent(
                    table="bj1",
                    round_id="r1",
                    seq=1,
                    ts=datetime.now(UTC),
                    type="card_dealt",
                    data={"card": "QH"},
                ),
            )
            async with asyncio.timeout(10):
                while (text := str(await ws.recv())) == PING:
                    pass
    message = json.loads(text)
    # Only snapshots came before the pings: nothing had happened at the table.
    assert all(json.loads(seen).get("channel") != "round_events" for seen in received)
    assert (message["table"], message["channel"], message["data"]["seq"]) == (
        "bj1",
        "round_events",
        1,
    )


async def test_one_session_holds_a_few_console_sockets_at_most(
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    people: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A viewer's session held 1,000 sockets, every connection the server serves, and
    managers and the game platform got 503 (a pentest, 2026-12-07): one more than
    SOCKETS_PER_SESSION is closed with 1013 (try again later), one closed frees its place."""

    monkeypatch.setattr(pages, "SOCKETS_PER_SESSION", 3)
    monkeypatch.setattr(web_streams, "KEEPALIVE_SECONDS", 0.05)  # each open one pings
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            await login(http, "viewer")
            cookie = f"studio_session={http.cookies['studio_session']}"
        url = f"ws://127.0.0.1:{server.port}/console/ws"
        header = {"Cookie": cookie}
        held = [await websockets.connect(url, additional_headers=header) for _ in range(3)]
        try:
            for ws in held:  # each streams (a snapshot or a ping comes)
                await asyncio.wait_for(ws.recv(), 10)
            async with websockets.connect(url, additional_headers=header) as over:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(over.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
            await held.pop().close()
            async with asyncio.timeout(10):
                while True:  # its place is free once the server has seen it go
                    async with websockets.connect(url, additional_headers=header) as again:
                        try:
                            await asyncio.wait_for(again.recv(), 10)
                            break
                        except websockets.ConnectionClosed:
                            await asyncio.sleep(0.05)
        finally:
            for ws in held:
                await ws.close()
