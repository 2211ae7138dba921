"""How table streams end: a client too slow, a client sending anything, the server stopping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
import websockets
from stream_support import (
    StalledClients,
    check_a_stalled_client_slows_no_one,
    close_code,
    event,
    until,
    websocket_upgrade,
)

from studio.contract import RoundState
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web import streams as web_streams

TOKEN = "test-platform-token"


def context(fanout: Fanout) -> WebContext:
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    return ctx


@pytest.fixture
def stalled() -> Iterator[StalledClients]:
    with StalledClients() as clients:
        yield clients


def sse_request(table: str) -> str:
    return (
        f"GET /api/tables/{table}/events HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n"
    )


@pytest.mark.parametrize("kind", ["websocket", "sse"])
async def test_a_client_that_stops_reading_is_disconnected_and_slows_no_one(
    table_id: str,
    kind: str,
    stalled: StalledClients,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    path = f"/ws/tables/{table_id}?token={TOKEN}"
    request = websocket_upgrade(path) if kind == "websocket" else sse_request(table_id)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        async with websockets.connect(f"ws://127.0.0.1:{server.port}{path}", max_size=None) as fast:
            await check_a_stalled_client_slows_no_one(
                fanout, table_id, fast, lambda: stalled.open(server.port, request)
            )


async def test_a_websocket_client_too_slow_for_its_backlog_gets_close_code_1013(
    table_id: str,
) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            await until(lambda: fanout.listener_count == 1, "the client listens")
            for seq in range(1, 10):  # no await between them: the backlog overflows
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
            closed_with = await close_code(ws)
    assert closed_with == 1013


async def test_what_a_websocket_client_sends_is_ignored(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            await until(lambda: fanout.listener_count == 1, "the client listens")
            await ws.send("not a command")
            await ws.send(b"\x00\xffbinary")
            async with asyncio.timeout(10):
                await (await ws.ping())  # the server has read all three
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
            async with asyncio.timeout(10):
                got = json.loads(await ws.recv())
    assert got["data"]["seq"] == 1


async def test_stopping_the_server_ends_every_stream(table_id: str) -> None:
    fanout = Fanout(bus=None)
    state = RoundState(table=table_id, round_id="r1", seq=1, ts=datetime.now(UTC), phase="betting")
    await fanout.emit(table_id, Channel.ROUND_STATE, state)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=30, headers=auth) as client:
        async with WebServer(create_app(context(fanout)), port=0) as server:
            ws = await websockets.connect(
                f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
            )
            first = json.loads(await ws.recv())
            sse = client.stream("GET", f"{server.url}/api/tables/{table_id}/events")
            response = await sse.__aenter__()
            lines_of_sse = response.aiter_lines()
            async for line in lines_of_sse:
                lines.append(line)
                if line.startswith("data:"):
                    break
            assert fanout.listener_count == 2
        # The server has stopped: the SSE response ended cleanly, the WebSocket was closed.
        async with asyncio.timeout(10):
            lines.extend([line async for line in lines_of_sse])
        await sse.__aexit__(None, None, None)
        closed_with = await close_code(ws)
    assert first["channel"] == "round_state"
    assert closed_with == 1012
    assert any(line.startswith("event: round_state") for line in lines)
    assert fanout.listener_count == 0
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith(("sse-", "ws-"))]


async def test_a_websocket_client_sending_a_big_frame_is_closed_with_1009(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            await ws.send("x" * 1024 * 1024)
            closed_with = await close_code(ws)
        await until(lambda: fanout.listener_count == 0, "its listener is gone")
    assert closed_with == 1009
