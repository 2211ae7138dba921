"""A WebSocket client that stops reading: found too slow with little buffered, logged, and
its connection dropped (reset, the server's socket gone), not closed gracefully with what
could not be sent left to the kernel; the same for a client that stops answering pings.
A client that reads is never dropped.

A real server and a raw client socket that sends its upgrade request and never reads. The
server side of the connection is read from /proc/net/tcp (Linux), which also lists a
socket the process has closed but the kernel still holds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
import websockets
from stream_support import (
    ESTABLISHED,
    PROC_TCP,
    event,
    released,
    server_side,
    stall_until_given_up,
    until,
    websocket_upgrade,
)

from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web import server as web_server
from studio.web import streams as web_streams

TOKEN = "test-platform-token"

pytestmark = pytest.mark.skipif(not PROC_TCP.exists(), reason="reads /proc/net/tcp (Linux)")


@pytest.fixture
def stalled() -> Iterator[list[socket.socket]]:
    sockets: list[socket.socket] = []
    yield sockets
    for sock in sockets:
        sock.close()


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="studio")
    return caplog


def path_of(table: str) -> str:
    return f"/ws/tables/{table}?token={TOKEN}"


@asynccontextmanager
async def stalled_client(
    table: str, sockets: list[socket.socket], fanout: Fanout
) -> AsyncIterator[tuple[WebServer, int]]:
    """A real server of ``fanout`` and a WebSocket client of ``table``'s stream, with the
    kernel's default buffers, that never reads, listening: (the server, the client's port)."""
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    async with WebServer(create_app(ctx), port=0) as server:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(websocket_upgrade(path_of(table)).encode())
        sockets.append(sock)
        await until(lambda: fanout.listener_count == 1, "the client listens")
        yield server, int(sock.getsockname()[1])


def warned(caplog: pytest.LogCaptureFixture, *words: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and all(w in r.getMessage() for w in words)
    ]


async def test_a_stalled_websocket_client_is_dropped_logged_and_its_socket_released(
    table_id: str,
    stalled: list[socket.socket],
    warnings: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        assert server_side(server.port, client_port) == (ESTABLISHED, 0)
        await stall_until_given_up(fanout, table_id, server.port, client_port)
        # Dropped: no socket left on the server's side (not even one the kernel still
        # holds to send the rest), while the server keeps running.
        ended = await released(server.port, client_port, stalled[0])
    assert ended == "reset"
    assert warned(warnings, "too slow", table_id, f":{client_port}")


async def test_a_websocket_connection_queues_little_for_a_client_that_stopped_reading(
    table_id: str, stalled: list[socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As an SSE connection's: left to autotuning, the socket's send buffer held megabytes,
    # so a client was found too slow only once that was full.
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        most = await stall_until_given_up(fanout, table_id, server.port, client_port)
    # At most the 64 KiB asked for, which the kernel doubles for its bookkeeping: 256 KiB
    # leaves room.
    assert most <= 256 * 1024


async def test_a_stalled_websocket_client_too_slow_for_its_backlog_is_dropped(
    table_id: str,
    stalled: list[socket.socket],
    warnings: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The stream ends (its backlog overflowed) while the socket is full: the close frame
    # (1013) cannot be sent either. The handler then returned, and uvicorn's close waited
    # for the client to read what was buffered, for good.
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None, listener_queue=3)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        # One event far bigger than every buffer on the way: its send fills them.
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1, 8_000_000))
        await until(
            lambda: (server_side(server.port, client_port) or ("", 0))[1] > 0,
            "the big event is on its way",
        )
        for seq in range(2, 12):  # no await between them: the backlog overflows
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
        assert fanout.listener_count == 0
        ended = await released(server.port, client_port, stalled[0])
    assert ended == "reset"
    assert warned(warnings, "WebSocket client", "too slow", table_id, f":{client_port}")


async def test_a_websocket_client_that_stops_answering_pings_is_dropped_and_logged(
    table_id: str,
    stalled: list[socket.socket],
    warnings: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A quiet table: nothing fills the socket, so only the server's ping finds the client
    # gone. uvicorn closed such a connection gracefully (1011), with no word in the log.
    monkeypatch.setattr(web_server, "WS_PING_INTERVAL_SECONDS", 0.2)
    monkeypatch.setattr(web_server, "WS_PING_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        # Some of the table's output too, more than the client's kernel takes unread.
        for seq in range(1, 9):
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq, 32_000))
        await until(lambda: fanout.listener_count == 0, "the server lets the client go")
        ended = await released(server.port, client_port, stalled[0])
    assert ended == "reset"
    assert warned(warnings, "ping", table_id, f":{client_port}")


async def test_a_stalled_websocket_client_whose_stream_ends_is_dropped_and_logged(
    table_id: str,
    stalled: list[socket.socket],
    warnings: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A review: a stream ended (a shutdown, a logout) while its client, which had stopped
    # reading, had little queued: the close frame went into the buffer, the handler
    # returned, and uvicorn's close waited for the client to read, with no limit.
    monkeypatch.setattr(web_server, "WS_CLOSE_TIMEOUT_SECONDS", 0.5, raising=False)
    fanout = Fanout(bus=None)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        for seq in range(1, 9):  # more than the client's kernel takes unread, little more
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq, 32_000))
        fanout.end_streams()
        await until(lambda: fanout.listener_count == 0, "the stream ends")
        ended = await released(server.port, client_port, stalled[0])
    assert ended == "reset"
    assert warned(warnings, "did not answer the close", table_id, f":{client_port}")


async def test_a_websocket_client_that_reads_is_never_dropped(
    table_id: str, warnings: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The deadlines made short (with room for a loaded machine), pings frequent, the stream
    # busy for a while: a client that reads (and so answers the pings) gets every message
    # and stays connected.
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 2.0)
    monkeypatch.setattr(web_server, "WS_PING_INTERVAL_SECONDS", 0.2)
    monkeypatch.setattr(web_server, "WS_PING_TIMEOUT_SECONDS", 2.0)
    fanout = Fanout(bus=None)
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    count = 200
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}{path_of(table_id)}"
        async with websockets.connect(url, max_size=None) as ws:
            await until(lambda: fanout.listener_count == 1, "the client listens")
            seqs: list[int] = []

            async def read() -> None:
                while len(seqs) < count:
                    seqs.append(json.loads(await ws.recv())["data"]["seq"])

            reader = asyncio.create_task(read(), name="reader")
            for seq in range(1, count + 1):  # ~2 s: several pings answered meanwhile
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq, 32_000))
                await asyncio.sleep(0.01)
            async with asyncio.timeout(30):
                await reader
            await asyncio.sleep(1)  # a few more pings, with nothing to send
            async with asyncio.timeout(10):
                await (await ws.ping())  # still open
            assert fanout.listener_count == 1
    assert seqs == list(range(1, count + 1))
    assert not warned(warnings, "WebSocket")
