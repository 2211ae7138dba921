"""What the stream lifecycle tests share: the table streams' (tests/web) and the console
WebSocket's (tests/console), which run the same send loop."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from studio.contract import RoundEvent
from studio.streams import Channel, Fanout

# The kernel's TCP sockets (Linux): it also lists a socket the process has closed but the
# kernel still holds (to send the rest of what was written).
PROC_TCP = Path("/proc/net/tcp")
ESTABLISHED = "01"


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


def server_side(server_port: int, client_port: int) -> tuple[str, int] | None:
    """(state, send queue bytes) of the server's socket of this connection; None: none left."""
    for line in PROC_TCP.read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if (int(local.split(":")[1], 16), int(remote.split(":")[1], 16)) == (
            server_port,
            client_port,
        ):
            return fields[3], int(fields[4].split(":")[0], 16)
    return None


async def read_until_closed(sock: socket.socket) -> str:
    """Read what the client was sent until the connection ends (at most 10 s): how it ended."""
    sock.setblocking(False)
    async with asyncio.timeout(10):
        while True:
            try:
                if not sock.recv(1 << 20):
                    return "eof"
            except BlockingIOError:
                await asyncio.sleep(0.01)
            except ConnectionResetError:
                return "reset"


async def released(server_port: int, client_port: int, sock: socket.socket) -> str:
    """Wait until the server holds no socket of this connection (not even one the kernel
    keeps to send the rest), then read the client's side to its end: how it ended."""
    await until(
        lambda: server_side(server_port, client_port) is None,
        "the server's socket of the stalled client is gone",
    )
    return await read_until_closed(sock)


async def stall_until_given_up(
    fanout: Fanout, table: str, server_port: int, client_port: int
) -> int:
    """Emit 32 KB events until the server gives up on the stalled client (at most 16 MB);
    the most its socket had queued for the client meanwhile."""
    most = 0
    for seq in range(1, 513):
        await fanout.emit(table, Channel.ROUND_EVENTS, event(table, seq, 32_000))
        await asyncio.sleep(0.005)
        if (side := server_side(server_port, client_port)) is not None:
            most = max(most, side[1])
        if fanout.listener_count == 0:
            return most
    raise AssertionError("the server never gave up on the stalled client")


def websocket_upgrade(path: str, headers: str = "") -> str:
    """A raw WebSocket upgrade request for ``path`` (``headers``: more lines, each ending CRLF)."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Upgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )


class StalledClients:
    """Raw client sockets that send a request and never read, with a small receive buffer."""

    def __init__(self) -> None:
        self.sockets: list[socket.socket] = []

    def open(self, port: int, request: str) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(request.encode())
        self.sockets.append(sock)

    def __enter__(self) -> StalledClients:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sock in self.sockets:
            sock.close()


async def check_a_stalled_client_slows_no_one(
    fanout: Fanout, table: str, fast: ClientConnection, open_stalled: Callable[[], None]
) -> None:
    """With ``fast`` listening, a client opened by ``open_stalled`` never reads: it is let go
    (the send deadline patched small) and ``fast`` gets every event in order."""
    count = 400  # 400 x 32 KB: more than the socket buffers hold, less than a backlog
    open_stalled()
    await until(lambda: fanout.listener_count == 2, "both clients listen")
    seqs: list[int] = []

    async def read_fast() -> None:
        while len(seqs) < count:
            message = json.loads(await fast.recv())
            if message["channel"] == "round_events":
                seqs.append(message["data"]["seq"])

    reader = asyncio.create_task(read_fast(), name="fast-reader")
    for seq in range(1, count + 1):
        await fanout.emit(table, Channel.ROUND_EVENTS, event(table, seq, 32_000))
        await asyncio.sleep(0)
    async with asyncio.timeout(30):
        await reader
    # The stalled client's handler gave up on it: only the fast one still listens.
    await until(lambda: fanout.listener_count == 1, "the stalled client is let go")
    assert seqs == list(range(1, count + 1))


async def close_code(ws: ClientConnection) -> int:
    """Read ``ws`` until the server closes it (at most 10 s); the code it closed with."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        async with asyncio.timeout(10):
            while True:
                await ws.recv()
    assert closed.value.rcvd is not None, "closed without a close frame"
    return closed.value.rcvd.code
