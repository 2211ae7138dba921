"""How the console's WebSocket ends: as the table streams do (tests/web/test_stream_lifecycle.py).

A client too slow, a client sending anything or too much, the server stopping. The
database, the fan-out and the server are the real ones; the console is logged into over
HTTP like a browser.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import websockets
from console_double import InMemoryController
from console_helpers import context, login
from fastapi import FastAPI
from stream_support import (
    StalledClients,
    check_a_stalled_client_slows_no_one,
    close_code,
    event,
    until,
    websocket_upgrade,
)
from websockets.asyncio.client import connect

from studio.contract import RoundState
from studio.store import Database
from studio.streams import Channel, Fanout
from studio.web import WebServer, create_app
from studio.web import streams as web_streams

pytestmark = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


class Console:
    """A running server with the console, and a viewer's session cookie."""

    def __init__(self, app: FastAPI, server: WebServer, cookie: str) -> None:
        self.app = app
        self.server = server
        self.cookie = cookie
        self.url = f"ws://127.0.0.1:{server.port}/console/ws"

    def connect(self, query: str = "", **options: Any) -> connect:
        return websockets.connect(
            self.url + query, additional_headers={"Cookie": self.cookie}, **options
        )


@asynccontextmanager
async def serving(
    database: Database, fanout: Fanout, controller: InMemoryController
) -> AsyncIterator[Console]:
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        async with httpx.AsyncClient(base_url=server.url) as http:
            await login(http, "viewer")
            cookie = f"studio_session={http.cookies['studio_session']}"
        yield Console(app, server, cookie)


@pytest.fixture
async def console(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> AsyncIterator[Console]:
    async with serving(database, fanout, controller) as running:
        yield running


@pytest.fixture
def stalled() -> Iterator[StalledClients]:
    with StalledClients() as clients:
        yield clients


async def test_a_console_client_that_stops_reading_is_disconnected_and_slows_no_one(
    console: Console,
    fanout: Fanout,
    stalled: StalledClients,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    request = websocket_upgrade("/console/ws", f"Cookie: {console.cookie}\r\n")
    async with console.connect(max_size=None) as fast:
        await check_a_stalled_client_slows_no_one(
            fanout, "bj1", fast, lambda: stalled.open(console.server.port, request)
        )


async def test_a_console_client_too_slow_for_its_backlog_gets_close_code_1013(
    database: Database, controller: InMemoryController, people: object
) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    async with serving(database, fanout, controller) as console, console.connect() as ws:
        await until(lambda: fanout.listener_count == 1, "the client listens")
        for seq in range(1, 10):  # no await between them: the backlog overflows
            await fanout.emit("bj1", Channel.ROUND_EVENTS, event("bj1", seq))
        closed_with = await close_code(ws)
    assert closed_with == 1013


async def test_what_a_console_client_sends_is_ignored(console: Console, fanout: Fanout) -> None:
    async with console.connect() as ws:
        await until(lambda: fanout.listener_count == 1, "the client listens")
        await ws.send("not a command")
        await ws.send(b"\x00\xffbinary")
        async with asyncio.timeout(10):
            await (await ws.ping())  # the server has read all three
        await fanout.emit("bj2", Channel.ROUND_EVENTS, event("bj2", 1))
        async with asyncio.timeout(10):
            got = json.loads(await ws.recv())
    assert got["table"] == "bj2" and got["data"]["seq"] == 1


async def test_a_console_client_sending_a_big_frame_is_closed_with_1009(
    console: Console, fanout: Fanout
) -> None:
    async with console.connect() as ws:
        await until(lambda: fanout.listener_count == 1, "the client listens")
        await ws.send("x" * 1024 * 1024)
        closed_with = await close_code(ws)
    await until(lambda: fanout.listener_count == 0, "its listener is gone")
    assert closed_with == 1009


async def test_stopping_the_server_ends_the_console_stream_with_1012(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    state = RoundState(table="bj1", round_id="r1", seq=1, ts=datetime.now(UTC), phase="betting")
    await fanout.emit("bj1", Channel.ROUND_STATE, state)
    async with serving(database, fanout, controller) as console:
        ws = await console.connect("?table=bj1")
        first = json.loads(await ws.recv())
        assert fanout.listener_count == 1
    closed_with = await close_code(ws)
    assert first["channel"] == "round_state"
    assert closed_with == 1012
    assert fanout.listener_count == 0
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("console-ws")]


async def test_a_console_stream_opened_while_the_server_stops_ends_at_once(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    async with serving(database, fanout, controller) as console:
        # What the stopping server does between closing its sockets and waiting for its
        # handlers (a handshake already under way still reaches the console).
        web_streams.stop_streams(console.app)
        async with console.connect() as ws:
            closed_with = await close_code(ws)
    assert closed_with == 1012
