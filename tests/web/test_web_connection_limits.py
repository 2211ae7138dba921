"""The web server's limits on connections (studio.web.server): a connection that does not
deliver a request's headers in time (nothing sent, or trickled a byte at a time) is
closed, while a stream (WebSocket, SSE) idle for longer stays open; connections over the
cap are refused, and a request is served again once below it; the open files limit is
raised at the start, and asyncio's accept() errors are logged at most once a minute.

A real server on a real port, raw client sockets. Before 2026-12-07 a silent or slowloris
connection was held for good, there was no cap, and a process out of descriptors logged
a traceback for every accept() it retried (a pentest: 537,716 in 40 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import resource
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import websockets
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect
from stream_support import event, read_until_closed, until

from studio.config.models import WebSettings
from studio.log_throttle import LogThrottle
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web import server as web_server

TOKEN = "test-platform-token"
# Short deadlines, for the tests: the server's own is REQUEST_HEADERS_TIMEOUT_SECONDS.
DEADLINE = 0.3


def context(fanout: Fanout) -> WebContext:
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    return ctx


@pytest.fixture
def clients() -> Iterator[list[socket.socket]]:
    sockets: list[socket.socket] = []
    yield sockets
    for sock in sockets:
        sock.close()


def connect(port: int, clients: list[socket.socket]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    clients.append(sock)
    return sock


async def trickle_until_closed(sock: socket.socket) -> str:
    """Send a request's start, then its headers a byte at a time, never ending them, until
    the server ends the connection (at most 10 s): how it ended."""
    sock.setblocking(False)
    sock.send(b"GET /api/health HTTP/1.1\r\nHost: x\r\n")
    header = b"X-a: b\r\n"
    sent = 0
    async with asyncio.timeout(10):
        while True:
            try:
                if not sock.recv(4096):
                    return "eof"
            except BlockingIOError:
                pass
            except ConnectionResetError:
                return "reset"
            try:
                sock.send(header[sent % len(header) :][:1])
            except (BrokenPipeError, ConnectionResetError):
                return "reset"
            sent += 1
            await asyncio.sleep(0.02)


async def answer_until_closed(sock: socket.socket) -> bytes:
    """What the client was answered, until the server ended the connection (at most 10 s)."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    answer = b""
    with contextlib.suppress(ConnectionResetError):
        async with asyncio.timeout(10):
            while chunk := await loop.sock_recv(sock, 1 << 16):
                answer += chunk
    return answer


async def trickle_body_until_closed(sock: socket.socket, path: str) -> bytes:
    """Send a request's headers announcing a body of 1 MB, then its body a byte every
    50 ms, until the server ends the connection (at most 10 s): what it answered."""
    sock.setblocking(False)
    sock.send(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{".encode()
    )
    answer = b""
    async with asyncio.timeout(10):
        while True:
            try:
                got = sock.recv(4096)
                if not got:
                    return answer
                answer += got
            except BlockingIOError:
                pass
            except ConnectionResetError:
                return answer
            try:
                sock.send(b" ")
            except (BrokenPipeError, ConnectionResetError):
                return answer + (b"" if answer else b"(reset)")
            await asyncio.sleep(0.05)


async def test_a_connection_that_sends_nothing_is_closed(clients: list[socket.socket]) -> None:
    async with WebServer(
        create_app(context(Fanout(bus=None))), port=0, headers_timeout=DEADLINE
    ) as server:
        silent = connect(server.port, clients)
        assert await read_until_closed(silent) == "eof"
        await until(lambda: server.connections == 0, "the silent connection released")


async def test_headers_trickled_a_byte_at_a_time_are_cut_off(
    clients: list[socket.socket],
) -> None:
    async with WebServer(
        create_app(context(Fanout(bus=None))), port=0, headers_timeout=DEADLINE
    ) as server:
        assert await trickle_until_closed(connect(server.port, clients)) in ("eof", "reset")
        await until(lambda: server.connections == 0, "the slow connection released")
        # And after a response: the next request's headers have the same deadline.
        kept = connect(server.port, clients)
        kept.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.setblocking(False)
        answer = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(kept, 4096), 5)
        assert answer.startswith(b"HTTP/1.1 200")
        assert await trickle_until_closed(kept) in ("eof", "reset")


async def test_headers_past_their_size_limit_are_answered_431(
    clients: list[socket.socket],
) -> None:
    """One header sent on and on was buffered and parsed again without end on the event
    loop the tables run on (50 MB in 2 s; a pentest): past MAX_REQUEST_HEADER_BYTES the
    request is answered 431 and its connection closed. A request with headers under it and
    a body far over it is served."""
    async with WebServer(create_app(context(Fanout(bus=None))), port=0) as server:
        loop = asyncio.get_running_loop()
        flood = connect(server.port, clients)
        flood.setblocking(False)
        await loop.sock_sendall(flood, b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-a: ")
        answer = b""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for _ in range(2 * web_server.MAX_REQUEST_HEADER_BYTES // 4096 + 1):
                await loop.sock_sendall(flood, b"b" * 4096)
        with contextlib.suppress(ConnectionResetError):
            async with asyncio.timeout(5):
                while chunk := await loop.sock_recv(flood, 4096):
                    answer += chunk
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        await until(lambda: server.connections == 0, "the flooding connection released")
        # Headers of a few KiB and a body of 200 KiB in the same reads: not headers.
        auth = {"Authorization": f"Bearer {TOKEN}", "X-big": "y" * 4000}
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as client:
            sent = await client.post("/api/health", content=b"z" * 200_000)
        assert sent.status_code in (200, 405), sent.text


async def test_headers_past_their_size_limit_in_one_read_are_answered_431(
    clients: list[socket.socket],
) -> None:
    """Headers ended in the read that took them past MAX_REQUEST_HEADER_BYTES were parsed
    and served, whatever their size (a pentest: "a 100 KB header in one read passes"),
    and so were a pipelined request's: the cap holds however they are read."""
    async with WebServer(create_app(context(Fanout(bus=None))), port=0) as server:
        loop = asyncio.get_running_loop()
        big = b"X-a: " + b"b" * 100_000 + b"\r\n"
        one_read = connect(server.port, clients)
        one_read.setblocking(False)
        await loop.sock_sendall(
            one_read, b"GET /api/health HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n"
        )
        answer = await answer_until_closed(one_read)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        # Under the cap in the first read, over it in the read that ends them.
        two_reads = connect(server.port, clients)
        two_reads.setblocking(False)
        await loop.sock_sendall(
            two_reads, b"GET /api/health HTTP/1.1\r\nHost: x\r\n" + big[:40_000]
        )
        await asyncio.sleep(0.05)  # (read apart, most likely: either way, over the cap)
        await loop.sock_sendall(two_reads, big[40_000:] + b"\r\n")
        answer = await answer_until_closed(two_reads)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        # Behind a small request, in the same read: that one may be answered, not this one.
        pipelined = connect(server.port, clients)
        pipelined.setblocking(False)
        small = b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n"
        await loop.sock_sendall(pipelined, small + small[:-2] + big + b"\r\n")
        answer = await answer_until_closed(pipelined)
        assert answer.count(b"HTTP/1.1 200 ") <= 1, answer[:200]
        await until(lambda: server.connections == 0, "the connections released")
        # Headers just under the cap, in one read: served.
        under = connect(server.port, clients)
        under.setblocking(False)
        near = b"X-a: " + b"b" * 60_000 + b"\r\n"
        await loop.sock_sendall(
            under, b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + near + b"\r\n"
        )
        answer = await answer_until_closed(under)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]


async def test_a_body_trickled_past_its_deadline_is_answered_408(
    clients: list[socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    """A body announced big and sent a byte at a time held its connection and its
    handler, waiting for the body, for good (a pentest): it has body_timeout from the end
    of the headers. A body sent at once is served under the same deadline."""
    app = create_app(context(Fanout(bus=None)))
    async with WebServer(app, port=0, headers_timeout=60, body_timeout=DEADLINE) as server:
        slow = connect(server.port, clients)
        answer = await trickle_body_until_closed(slow, "/api/tables/bj-body/commands")
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
        await until(lambda: server.connections == 0, "the slow connection released")
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as client:
            sent = await client.post("/api/health", content=b"z" * 2000)
        assert sent.status_code in (200, 405), sent.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


class Probe:
    """A small app whose answers the test holds: ``/held`` until ``release``, ``/stream``
    (SSE: one event, the second once ``release`` is set), ``/early`` answered without
    reading its body, ``/echo`` its body's length and the header names it was given."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.app = FastAPI()
        self.app.get("/fast")(self.fast)
        self.app.get("/held")(self.held)
        self.app.get("/stream")(self.stream)
        self.app.post("/early")(self.fast)
        self.app.post("/echo")(self.echo)

    async def fast(self) -> dict[str, bool]:
        return {"ok": True}

    async def held(self) -> dict[str, bool]:
        self.entered.set()
        await self.release.wait()
        return {"ok": True}

    async def stream(self) -> StreamingResponse:
        async def events() -> AsyncIterator[str]:
            yield "data: 0\n\n"
            await self.release.wait()
            yield "data: 1\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def echo(self, request: Request) -> dict[str, object]:
        try:
            body = await request.body()
        except ClientDisconnect:  # (the server's own answer sent)
            return {}
        return {"length": len(body), "headers": [name for name, _ in request.headers.items()]}


CHUNKED_POST = (
    b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"2\r\n{}\r\n0\r\n"  # then trailer fields, and a blank line
)


async def flood(sock: socket.socket, start: bytes, piece: bytes, size: int) -> None:
    """Send ``start``, then ``piece`` again and again, ``size`` bytes in all, or until the
    server ends the connection."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        await loop.sock_sendall(sock, start)
        for _ in range(size // len(piece) + 1):
            await loop.sock_sendall(sock, piece)


async def test_trailer_fields_past_the_header_cap_are_answered_431(
    clients: list[socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    """A chunked body's trailer fields had no cap (a review): uvicorn added each to the
    request's headers, at the socket's speed, until the body deadline (85 MB to 1.1 GB in
    10 s). Past MAX_REQUEST_HEADER_BYTES they are answered 431 and the connection closed,
    field after field or one field never ended, its handler told of a disconnect; under it
    the request is served, its trailers not handed to the app."""
    cap = web_server.MAX_REQUEST_HEADER_BYTES
    field = b"X-a: " + b"b" * 1017 + b"\r\n"
    app = create_app(context(Fanout(bus=None)))
    async with WebServer(app, port=0, headers_timeout=60) as server:
        fields = connect(server.port, clients)
        start = (
            b"POST /api/tables/bj-trailers/commands HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n0\r\n"
        )
        await flood(fields, start, field, 2 * cap)
        answer = await answer_until_closed(fields)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        await until(lambda: server.connections == 0, "the flooding connection released")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    probe = Probe()
    async with WebServer(probe.app, port=0, headers_timeout=60) as server:
        endless = connect(server.port, clients)
        await flood(endless, CHUNKED_POST + b"X-a: ", b"b" * 4096, 2 * cap)
        answer = await answer_until_closed(endless)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        honest = connect(server.port, clients)
        honest.sendall(CHUNKED_POST.replace(b"Host: x", b"Connection: close") + b"X-t: 1\r\n\r\n")
        answer = await answer_until_closed(honest)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
        echoed = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert echoed["length"] == 2
        assert "x-t" not in echoed["headers"], echoed


async def test_spaces_before_a_header_value_count_toward_the_cap(
    clients: list[socket.socket],
) -> None:
    """The parser drops the spaces before a header's value, and headers ending in the
    read that took them were counted from what it gave: 100 KB of spaces in one read were
    served (a review). The read's bytes up to the end of the headers count; a body after
    them in the same read does not, even with the end of the headers split across reads."""
    probe = Probe()
    async with WebServer(probe.app, port=0, headers_timeout=60) as server:
        loop = asyncio.get_running_loop()
        spaces = connect(server.port, clients)
        spaces.setblocking(False)
        await loop.sock_sendall(
            spaces, b"GET /fast HTTP/1.1\r\nHost: x\r\nX-a:" + b" " * 100_000 + b"b\r\n\r\n"
        )
        answer = await answer_until_closed(spaces)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        split = connect(server.port, clients)
        split.setblocking(False)
        head = (
            b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 200000\r\n\r\n"
        )
        await loop.sock_sendall(split, head[:-1])
        await asyncio.sleep(0.05)  # (read apart, most likely: either way, served)
        await loop.sock_sendall(split, head[-1:] + b"z" * 200_000)
        answer = await answer_until_closed(split)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]


async def test_a_pipelined_body_deadline_waits_for_the_answer_before(
    clients: list[socket.socket],
) -> None:
    """A pipelined request's body deadline ran while the SSE stream before it was being
    sent, and wrote its 408 into the stream (a review): it runs from the stream's end."""
    probe = Probe()
    async with WebServer(probe.app, port=0, headers_timeout=60, body_timeout=DEADLINE) as server:
        sock = connect(server.port, clients)
        sock.sendall(
            b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
        )
        await asyncio.sleep(DEADLINE * 2)  # the stream still sent, past the deadline
        probe.release.set()
        answer = await answer_until_closed(sock)
    stream, _, after = answer.partition(b"data: 1\n\n\r\n0\r\n\r\n")
    assert stream.startswith(b"HTTP/1.1 200 ") and b"408" not in stream, answer
    assert after.startswith(b"HTTP/1.1 408 "), answer


async def test_headers_too_large_behind_a_request_answered_wait_for_its_answer(
    clients: list[socket.socket],
) -> None:
    """Headers too large on a pipelined request closed the connection at once, and the
    request before it was never answered (a review): it is, then the 431, then the close."""
    probe = Probe()
    async with WebServer(probe.app, port=0, headers_timeout=60) as server:
        sock = connect(server.port, clients)
        big = b"X-a: " + b"b" * 100_000 + b"\r\n"
        sock.sendall(b"GET /held HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\n" + big + b"\r\n")
        await probe.entered.wait()
        protocols = server._server.server_state.connections
        await until(
            lambda: all(getattr(p, "refused", True) for p in protocols), "the headers refused"
        )
        probe.release.set()
        answer = await answer_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
    assert answer.count(b"HTTP/1.1 ") == 2 and b"}HTTP/1.1 431 " in answer, answer


async def test_a_body_after_an_early_answer_is_not_the_next_request(
    clients: list[socket.socket],
) -> None:
    """A request answered before its body ended had the rest of the body counted as the
    next request's headers: a keep-alive client sending a body of 200 KB was answered 431
    for its next request (a review). The body still has its deadline."""
    probe = Probe()
    async with WebServer(probe.app, port=0, headers_timeout=60, body_timeout=DEADLINE) as server:
        loop = asyncio.get_running_loop()
        head = b"POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n"
        sock = connect(server.port, clients)
        sock.setblocking(False)
        await loop.sock_sendall(sock, head + b"z" * 1000)
        answer = await asyncio.wait_for(loop.sock_recv(sock, 4096), 10)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
        await loop.sock_sendall(
            sock, b"z" * 199_000 + b"GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        answer = await answer_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
        assert b" 431 " not in answer, answer
        # The rest of the body never sent: closed at the body deadline.
        stalled = connect(server.port, clients)
        stalled.setblocking(False)
        await loop.sock_sendall(stalled, head + b"z" * 1000)
        answer = await answer_until_closed(stalled)
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.count(b"HTTP/1.1 ") == 1, answer


async def test_streams_idle_longer_than_the_deadline_stay_open(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(
        create_app(context(fanout)), port=0, headers_timeout=DEADLINE, body_timeout=DEADLINE
    ) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            websockets.connect(url) as ws,
            httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as client,
            client.stream("GET", f"/api/tables/{table_id}/events") as sse,
        ):
            assert sse.status_code == 200
            await until(lambda: fanout.listener_count == 2, "both streams listening")
            await asyncio.sleep(DEADLINE * 4)  # nothing sent either way, past the deadline
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
            by_ws = json.loads(await asyncio.wait_for(ws.recv(), 5))
            by_sse = None
            async for line in sse.aiter_lines():
                if line.startswith("data:"):
                    by_sse = json.loads(line[5:])
                    break
            assert server.connections == 2
    assert by_ws["data"]["seq"] == 1
    assert by_sse is not None and by_sse["data"]["seq"] == 1


async def test_connections_over_the_cap_are_refused(clients: list[socket.socket]) -> None:
    app = create_app(context(Fanout(bus=None)))
    async with WebServer(app, port=0, headers_timeout=60, max_connections=3) as server:
        held = [connect(server.port, clients) for _ in range(3)]
        await until(lambda: server.connections == 3, "three connections held")
        over = connect(server.port, clients)
        over.setblocking(False)
        answer = b""
        async with asyncio.timeout(10):
            while True:
                try:
                    got = over.recv(4096)
                except BlockingIOError:
                    await asyncio.sleep(0.01)
                    continue
                except ConnectionResetError:
                    break
                if not got:
                    break
                answer += got
        assert answer == b"" or answer.startswith(b"HTTP/1.1 503 ")
        assert server.connections == 3
        held[0].close()
        await until(lambda: server.connections == 2, "one held connection released")
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            response = await client.get("/api/health")
        assert response.status_code == 200


async def refused(sock: socket.socket) -> bool:
    """Whether the server refused the connection (503, or closed unanswered)."""
    answer = await answer_until_closed(sock)
    return answer == b"" or answer.startswith(b"HTTP/1.1 503 ")


def connect_from(address: str, port: int, clients: list[socket.socket]) -> socket.socket:
    """A connection from another loopback address (Linux answers on all of 127/8)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    clients.append(sock)
    sock.bind((address, 0))
    sock.connect(("127.0.0.1", port))
    return sock


async def test_connections_over_the_cap_per_address_are_refused(
    clients: list[socket.socket], caplog: pytest.LogCaptureFixture, table_id: str
) -> None:
    """One host reconnecting held every connection the server serves, and locked every
    console and game server out (a pentest): past max_connections_per_address, an
    address's connections are refused as over the global cap; another address is served,
    and the address is again once below it. A WebSocket counts from its upgrade to its end."""
    app = create_app(context(Fanout(bus=None)))
    async with WebServer(
        app, port=0, headers_timeout=60, max_connections=100, max_connections_per_address=3
    ) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url):
            held = [connect(server.port, clients) for _ in range(2)]
            await until(lambda: server.connections == 3, "three connections held")
            assert await refused(connect(server.port, clients))
            assert "3 connections open from 127.0.0.1" in caplog.text
            other = connect_from("127.0.0.2", server.port, clients)
            other.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert (await answer_until_closed(other)).startswith(b"HTTP/1.1 200 ")
            held[0].close()
            await until(lambda: server.connections == 2, "one held connection released")
            async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
                assert (await client.get("/api/health")).status_code == 200
        await until(lambda: server.connections == 1, "the WebSocket's connection released")
        more = [connect(server.port, clients) for _ in range(2)]
        await until(lambda: server.connections == 3, "its place taken by another")
        assert await refused(connect(server.port, clients))
        for sock in held[1:] + more:
            sock.close()
        await until(lambda: server.connections == 0, "every connection released")
    # 0: no cap per address (behind a reverse proxy, whose clients all have its address).
    async with WebServer(app, port=0, headers_timeout=60, max_connections_per_address=0) as server:
        for _ in range(4):
            connect(server.port, clients)
        await until(lambda: server.connections == 4, "four connections from one address")


def test_the_per_address_cap_is_the_settings_default() -> None:
    assert WebSettings().max_connections_per_address == web_server.MAX_CONNECTIONS_PER_ADDRESS


async def test_the_open_files_limit_is_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="studio.web.server")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    lowered = max(len(os.listdir("/proc/self/fd")) + 64, 256)
    if lowered >= target:
        pytest.skip(f"the hard limit, {hard}, leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        async with WebServer(create_app(context(Fanout(bus=None))), port=0):
            raised = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert raised == target
    assert f"open files limit raised from {lowered} to {target}" in caplog.text


async def test_accept_errors_are_logged_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    message = "socket.accept() out of system resource"
    async with WebServer(create_app(context(Fanout(bus=None))), port=0):
        for log_filter in logging.getLogger("asyncio").filters:
            if isinstance(log_filter, web_server._AcceptErrorFilter):
                log_filter.every = LogThrottle(60)  # as at a start
        loop = asyncio.get_running_loop()
        for _ in range(5):  # as asyncio does for each queued connection
            loop.call_exception_handler(
                {"message": message, "exception": OSError(errno.EMFILE, "Too many open files")}
            )
    logged = [r for r in caplog.records if r.name == "asyncio" and message in r.getMessage()]
    assert len(logged) == 1


async def test_out_of_descriptors_accept_fails_once_then_recovers(
    caplog: pytest.LogCaptureFixture, clients: list[socket.socket]
) -> None:
    """Every descriptor taken: one accept() error per turn of the loop (asyncio went on
    for each queued connection, up to 2,048, each a traceback and a retry), and once
    descriptors are free again, the queued requests are answered."""
    message = "socket.accept() out of system resource"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    fillers: list[int] = []
    accept_errors = None
    async with WebServer(create_app(context(Fanout(bus=None))), port=0) as server:
        for log_filter in logging.getLogger("asyncio").filters:
            if isinstance(log_filter, web_server._AcceptErrorFilter):
                accept_errors = log_filter.every = LogThrottle(60)  # as at a start
        clients.extend(socket.socket() for _ in range(3))  # their descriptors taken now
        # Every descriptor taken; then the clients connect, and the server fails to
        # accept them.
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 16, hard))
        try:
            with contextlib.suppress(OSError):
                while True:
                    fillers.append(os.open(os.devnull, os.O_RDONLY))
            for client in clients:
                client.connect(("127.0.0.1", server.port))
                client.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await until(
                lambda: any(message in r.getMessage() for r in caplog.records),
                "accept() out of descriptors",
            )
        finally:
            for fd in fillers:
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        # asyncio retries in 1 s: then every queued request is answered.
        loop = asyncio.get_running_loop()
        for client in clients:
            client.setblocking(False)
            answer = await asyncio.wait_for(loop.sock_recv(client, 4096), 10)
            assert answer.startswith(b"HTTP/1.1 200")
    logged = [r for r in caplog.records if r.name == "asyncio" and message in r.getMessage()]
    assert len(logged) == 1
    assert accept_errors is not None and not accept_errors._held  # not one more tried


def test_the_cap_is_lowered_to_fit_a_low_open_files_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert web_server.connection_cap(1000, 65536) == 1000
    assert web_server.connection_cap(1000, 1256) == 1000
    assert not caplog.records
    assert web_server.connection_cap(1000, 1024) == 768  # 256 kept for the process's files
    assert web_server.connection_cap(1000, 300) == 150
    assert "serving at most 768 at once" in caplog.text
