"""An SSE client that stops reading: found too slow with little buffered, and its
connection dropped (reset, the server's socket gone), not left open with a full buffer.

A real server and a raw client socket that sends its request and never reads. The server
side of the connection is read from /proc/net/tcp (Linux), which also lists a socket the
process has closed but the kernel still holds.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
from stream_support import (
    ESTABLISHED,
    PROC_TCP,
    event,
    released,
    server_side,
    stall_until_given_up,
    until,
)

from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web import streams as web_streams

TOKEN = "test-platform-token"

pytestmark = pytest.mark.skipif(not PROC_TCP.exists(), reason="reads /proc/net/tcp (Linux)")


@pytest.fixture
def stalled() -> Iterator[list[socket.socket]]:
    sockets: list[socket.socket] = []
    yield sockets
    for sock in sockets:
        sock.close()


def open_stalled(port: int, table: str, sockets: list[socket.socket]) -> int:
    """A client with the kernel's default buffers that asks for the stream and never reads."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(
        f"GET /api/tables/{table}/events HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
    )
    sockets.append(sock)
    return int(sock.getsockname()[1])


@asynccontextmanager
async def stalled_client(
    table: str, sockets: list[socket.socket], fanout: Fanout
) -> AsyncIterator[tuple[WebServer, int]]:
    """A real server of ``fanout`` and a client of ``table``'s stream that never reads,
    listening: (the server, the client's port)."""
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    async with WebServer(create_app(ctx), port=0) as server:
        client_port = open_stalled(server.port, table, sockets)
        await until(lambda: fanout.listener_count == 1, "the client listens")
        yield server, client_port


async def test_a_stalled_sse_client_is_dropped_and_its_socket_released(
    table_id: str, stalled: list[socket.socket], monkeypatch: pytest.MonkeyPatch
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


async def test_an_sse_connection_queues_little_for_a_client_that_stopped_reading(
    table_id: str, stalled: list[socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel's autotuned send buffer held ~4 MB, so a client was found too slow only
    # once that was full; capped, it is found with a small fraction of it queued.
    monkeypatch.setattr(web_streams, "SEND_TIMEOUT_SECONDS", 0.3)
    fanout = Fanout(bus=None)
    async with stalled_client(table_id, stalled, fanout) as (server, client_port):
        most = await stall_until_given_up(fanout, table_id, server.port, client_port)
    # At most the 64 KiB asked for, which the kernel doubles for its bookkeeping: 256 KiB
    # leaves room. Left to autotuning, the queue grew past 1 MB here.
    assert most <= 256 * 1024


async def test_a_stalled_sse_client_too_slow_for_its_backlog_is_dropped(
    table_id: str, stalled: list[socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stream ends (its backlog overflowed) while the socket is full: the response's
    # end cannot be sent either. It used to wait for the client for good.
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
