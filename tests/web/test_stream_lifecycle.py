"""How table streams end: a client too slow, a client sending anything, the server stopping."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
import websockets

from studio.contract import RoundEvent, RoundState
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web import streams as web_streams

TOKEN = "test-platform-token"


def context(fanout: Fanout) -> WebContext:
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    return ctx


def event(table: str, seq: int, pad: int = 0) -> RoundEvent:
    return RoundEvent(
        table=table,
        round_id="r1",
        seq=seq,
        ts=datetime.now(UTC),
        type="card_dealt",
        data={"card": "QH", "pad": "x" * pad},
    )


async def until(condition: object, what: str) -> None:
    """Wait for ``condition()`` to hold (a functional wait, not a speed check)."""
    assert callable(condition)
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
def stalled() -> Iterator[list[socket.socket]]:
    """Raw client sockets that never read after the request, with a small receive buffer."""
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def open_stalled(port: int, request: str, opened: list[socket.socket]) -> None:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(request.encode())
    opened.append(sock)


def websocket_request(table: str) -> str:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET /ws/tables/{table}?token={TOKEN} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )


def sse_request(table: str) -> str:
    return (
        f"GET /api/tables/{table}/events HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n"
    )


@pytest.mark.parametrize("kind", ["websocket", "sse"])
async def test_a_client_that_stops_reading_is_disconnected_and_slows_no_one(
    table_id: str,
    kind: str,
    stalled: list[socket.socket],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    count = 400  # 400 x 32 KB: more than the socket buffers hold, less than a backlog
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url, max_size=None) as fast:
            request = websocket_request(table_id) if kind == "websocket" else sse_request(table_id)
            open_stalled(server.port, request, stalled)
            await until(lambda: fanout.listener_count == 2, "both clients listen")
            seqs: list[int] = []

            async def read_fast() -> None:
                while len(seqs) < count:
                    seqs.append(json.loads(await fast.recv())["data"]["seq"])

            reader = asyncio.create_task(read_fast())
            for seq in range(1, count + 1):
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq, 32_000))
                await asyncio.sleep(0)
            async with asyncio.timeout(30):
                await reader
            # The stalled client's handler gave up on it: only the fast one still listens.
            await until(lambda: fanout.listener_count == 1, "the stalled client is let go")
    assert seqs == list(range(1, count + 1))


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
            with pytest.raises(websockets.ConnectionClosed) as closed:
                async with asyncio.timeout(10):
                    while True:
                        await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013


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
        with pytest.raises(websockets.ConnectionClosed) as closed:
            async with asyncio.timeout(10):
                await ws.recv()
    assert first["channel"] == "round_state"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    assert any(line.startswith("event: round_state") for line in lines)
    assert fanout.listener_count == 0
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith(("sse-", "ws-"))]


async def test_a_websocket_client_sending_a_big_frame_is_closed_with_1009(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            await ws.send("x" * 1024 * 1024)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                async with asyncio.timeout(10):
                    await ws.recv()
        await until(lambda: fanout.listener_count == 0, "its listener is gone")
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
