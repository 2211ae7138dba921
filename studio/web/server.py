"""Run uvicorn inside the caller's event loop and lifecycle (no signal capture)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import re
import resource
import socket
from collections.abc import Generator
from types import TracebackType
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn._types import ASGISendEvent
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from studio.errors import StudioError
from studio.log_throttle import LogThrottle
from studio.web.streams import TRANSPORT_EXTENSION, reset_connection, stop_streams

_LOGGER = logging.getLogger(__name__)

# How long a stopping server waits for its connections before cancelling their handlers.
GRACEFUL_SHUTDOWN_SECONDS = 5
# Every WebSocket here is one-way (table and console streams): a client has nothing to
# send but a close, so a big frame is refused (1009) instead of buffered. At uvicorn's
# 16 MiB, twelve clients sending 15 MiB frames took the server from 77 to 479 MB.
WS_MAX_FRAME_BYTES = 64 * 1024
# The WebSocket keepalive (uvicorn's defaults): a ping every 20 s, 20 s for its pong, or the
# connection is reset (_WebSocketProtocol).
WS_PING_INTERVAL_SECONDS = 20.0
WS_PING_TIMEOUT_SECONDS = 20.0
# How long a client has to answer the server's close (uvicorn's 10 s), or it is reset.
WS_CLOSE_TIMEOUT_SECONDS = 10.0
# How long a connection has to deliver a request's complete headers, from its opening or
# from the end of the response before (an idle keep-alive connection): then it is closed
# (_HttpProtocol). Browsers, game servers and the console send theirs at once; uvicorn set
# no deadline at all (its keep-alive timer stops at the first byte of the next request),
# so a connection that sent nothing, or trickled its headers a byte at a time, was held
# for good. Not a limit on an answered request: a stream (SSE, WebSocket) lasts as long
# as its client.
REQUEST_HEADERS_TIMEOUT_SECONDS = 10.0
# An idle keep-alive connection is closed after this (uvicorn's default, 5 s), sooner than
# the deadline above, which still holds if it starts a request it does not finish.
KEEP_ALIVE_TIMEOUT_SECONDS = 5
# The most connections served at once (HTTP and WebSocket): one more is answered 503 and
# closed as soon as it is accepted (_HttpProtocol). A studio uses a few hundred at most: a
# table's streams for each game server (a WebSocket or SSE each), a console page's
# WebSocket plus the up to 6 connections a browser opens, devices' and monitoring's
# requests; 1,000 leaves room for 50 tables with several game servers and 100 console
# pages, while the process's descriptors (below) cannot run out.
MAX_CONNECTIONS = 1000
# The most connections one client address may hold at once (web.max_connections_per_address;
# 0: no such cap): one more from it is refused as over the cap above. Without it one host
# reconnecting could hold all 1,000, and lock every console and game server out (a
# pentest, 2026-12-07). An honest host holds far fewer: a game server a stream per table
# it plays and a few requests, a manager's browser a WebSocket and up to 6 connections per
# console page. Behind a reverse proxy every client has the proxy's address (the TCP peer
# is counted, not X-Forwarded-For): raise it there, or set 0.
MAX_CONNECTIONS_PER_ADDRESS = 200
# The listening socket's queue (uvicorn's backlog), which is also how many connections
# asyncio accepts in one go, before any of them can be refused.
LISTEN_BACKLOG = 2048
# Descriptors the process needs besides its connections: its database, broker, log files,
# devices' sockets (a few dozen), with a good margin.
RESERVED_FILES = 256
# The soft RLIMIT_NOFILE a server raises the process's to (at most the hard limit), so
# that the connection cap, not the limit, binds, with room for a burst of connections
# accepted at once (up to LISTEN_BACKLOG) before they are refused: 1,000 + 2,048 + 256.
# systemd's default is 1,024 (hard 524,288): once the descriptors ran out, asyncio logged a
# traceback for every accept() it retried (537,716 in 40 s, 239 MB, the process at 100 %
# CPU, the tables' inputs held back 20 s). Under a hard limit too low for the cap, the
# cap is lowered to fit (connection_cap).
OPEN_FILES_TARGET = 65536
# What asyncio logs when accept() fails for want of descriptors or memory, for each
# connection it retries: logged at most once per this many seconds, with how many were not.
ACCEPT_ERROR_MESSAGE = "socket.accept() out of system resource"
ACCEPT_ERROR_LOG_INTERVAL_SECONDS = 60.0
# Refused connections (the cap reached) are logged at most once per this many seconds too.
REFUSALS_LOG_INTERVAL_SECONDS = 60.0
# The most bytes a request's line and headers may take (browsers send a few KiB; nginx's
# default limit is 8 KiB a line, 32 KiB in all): past it the request is answered 431 and
# the connection closed. uvicorn's httptools parser has no limit: one client sending one
# endless header had it buffered and parsed again on the event loop the tables run on
# (50 MB in 2 s; three such connections held appends up to 28 s, dropped the broker link
# and lost the database lock: the controller stopped; a pentest, 2026-12-07). A chunked
# body's trailer fields (after its last chunk) are held to it too, and not handed to the
# app: until 2026-12-07 uvicorn added each to the request's headers, without limit (one
# connection took the server from 85 MB to 1.1 GB in 10 s; a review).
MAX_REQUEST_HEADER_BYTES = 64 * 1024
# How long a request's body has to arrive whole, from the end of its headers: then the
# connection is closed (408 if nothing was answered yet; _HttpProtocol). The bodies here are
# JSON of a few KiB (1 MiB at most, studio.web.app.MAX_BODY_BYTES), sent with the headers;
# until 2026-12-07 a body announced (Content-Length: 1000000) and trickled a byte every few
# seconds held its connection and its request's handler for good (a pentest). While the
# server holds the body back (its handler has not read what came, or not yet asked for it,
# Expect: 100-continue), the deadline waits; a pipelined request's runs from the end of
# the answers before it (an SSE stream may last). A request answered before its body
# ended keeps it: the next request's headers are awaited from the body's end.
REQUEST_BODY_TIMEOUT_SECONDS = 10.0
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: 26\r\n"
    b"connection: close\r\n"
    b"\r\n"
    b"request headers too large\n"
)
_TOO_SLOW = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: 30\r\n"
    b"connection: close\r\n"
    b"\r\n"
    b"request body not sent in time\n"
)
# The answer to a request cut off by the server's stop (_WithTransport), before its
# connection is closed.
_CUT_OFF_BODY = b'{"status":"stopping","detail":"the server stopped while answering: retry"}'
_CUT_OFF: list[Message] = [
    {
        "type": "http.response.start",
        "status": 503,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(_CUT_OFF_BODY)).encode()),
            (b"connection", b"close"),
        ],
    },
    {"type": "http.response.body", "body": _CUT_OFF_BODY},
]
# The answer to a connection over a cap, before it is closed.
_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: 28\r\n"
    b"connection: close\r\n"
    b"\r\n"
    b"too many connections, retry\n"
)


class _AcceptErrorFilter(logging.Filter):
    """asyncio's accept() out of descriptors, logged at most once per
    ``ACCEPT_ERROR_LOG_INTERVAL_SECONDS``: CPython 3.11 logs it (a traceback) and schedules
    a retry for each connection of the listening socket's queue, again at every retry, so
    a process out of descriptors filled its log (239 MB in 40 s)."""

    def __init__(self) -> None:
        super().__init__()
        self.every = LogThrottle(ACCEPT_ERROR_LOG_INTERVAL_SECONDS)

    def filter(self, record: logging.LogRecord) -> bool:
        if not (isinstance(record.msg, str) and record.msg.startswith(ACCEPT_ERROR_MESSAGE)):
            return True
        held = self.every.due()
        if held is None:
            return False
        if held and not record.args:
            record.msg = (
                f"{record.msg}\n({held} more since the last one, not logged: at most one "
                f"per {self.every.interval:g} s)"
            )
        return True


def _limit_accept_errors() -> None:
    """Put ``_AcceptErrorFilter`` on asyncio's logger, once per process."""
    asyncio_logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _AcceptErrorFilter) for f in asyncio_logger.filters):
        asyncio_logger.addFilter(_AcceptErrorFilter())


def raise_open_files_limit() -> int:
    """Raise the process's soft RLIMIT_NOFILE toward its hard limit (to
    ``OPEN_FILES_TARGET``; never lowered) and log it. Returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = OPEN_FILES_TARGET if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES_TARGET)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            _LOGGER.warning(
                "cannot raise the open files limit from %d to %d: %s", soft, target, exc
            )
        else:
            _LOGGER.info(
                "open files limit raised from %d to %d (hard limit %d)", soft, target, hard
            )
            return target
    else:
        _LOGGER.info("open files limit %d (hard limit %d)", soft, hard)
    return soft


def connection_cap(max_connections: int, open_files: int) -> int:
    """``max_connections``, or fewer if the open files limit cannot hold that many besides
    ``RESERVED_FILES`` (then logged): the cap, not the limit, has to bind."""
    if open_files == resource.RLIM_INFINITY or max_connections + RESERVED_FILES <= open_files:
        return max_connections
    cap = max(open_files - RESERVED_FILES, open_files // 2)
    _LOGGER.warning(
        "the open files limit, %d, cannot hold %d connections besides the process's other "
        "files: serving at most %d at once; raise it (systemd: LimitNOFILE=)",
        open_files,
        max_connections,
        cap,
    )
    return cap


def _connection_transport(send: Send) -> asyncio.Transport | None:
    """The transport of the connection ``send`` answers on, or None if it cannot be found.

    Relies on uvicorn's internals (0.55; its httptools and h11 protocols alike): the
    ``send`` it hands the app is the bound ``send`` of its ``RequestResponseCycle``, which
    keeps the connection's transport as ``transport``; its WebSocket protocol
    (websockets-sansio) is the ``send``'s own object, with the same ``transport``. ASGI
    offers no way to reach the connection, and only the transport can drop a client that
    stopped reading: uvicorn ends such a response, or a WebSocket whose handler returned,
    with ``transport.close()``, which waits for the client to read what is buffered, so the
    connection stayed open for good.
    """
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if callable(getattr(transport, "abort", None)) and callable(
        getattr(transport, "get_extra_info", None)
    ):
        return transport
    return None


class _WithTransport:
    """The app, with each HTTP request's and WebSocket's transport in its scope's extensions
    (``TRANSPORT_EXTENSION``): for the streams, SSE and WebSocket, which drop a client too
    slow.

    Once the server stops (``stopping``), a request cut off by it (its task cancelled, or
    what it awaited: the controller's answer) is answered 503 and ends quietly; a WebSocket
    not yet accepted is refused. uvicorn logged each as "Exception in ASGI application"
    with a ~128-line traceback: a controller stopping on a lost database lock buried the
    ERROR its runbook names under two of them (a drill, 2026-12-07). Other errors, and a
    cancellation while the server is not stopping, reach uvicorn and its log as before.
    ``WebServer.stop`` says in one line how many it cut off."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.stopping = False
        self._missing_logged = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        transport = _connection_transport(send)
        if transport is not None:
            scope.setdefault("extensions", {})[TRANSPORT_EXTENSION] = transport
        elif not self._missing_logged:
            self._missing_logged = True
            _LOGGER.warning(
                "uvicorn does not expose the connection's transport: a stream client "
                "that stops reading will keep its connection open"
            )
        begun = False  # the response's start (a WebSocket's accept or close) was sent

        async def sending(message: Message) -> None:
            nonlocal begun
            begun = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if not self.stopping:
                raise
            await self._cut_off(scope, send, transport, begun)

    async def _cut_off(
        self, scope: Scope, send: Send, transport: asyncio.Transport | None, begun: bool
    ) -> None:
        """End a request the server's stop cut off: 503 (a WebSocket refused) if nothing
        was sent yet, else its connection closed, the response unfinished."""
        if begun:
            if scope["type"] == "http" and transport is not None:
                reset_connection(transport)  # not a complete answer: no answer at all
                # Its loss taken (a turn of the loop) before uvicorn looks at the response:
                # else it logs it unfinished.
                await asyncio.sleep(0)
            return
        answer = _CUT_OFF if scope["type"] == "http" else [{"type": "websocket.close"}]
        # The connection may be gone meanwhile: nothing to answer then.
        with contextlib.suppress(OSError, RuntimeError):
            for message in answer:
                await send(message)


class _WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets-sansio), but a client that leaves a ping
    unanswered (``WS_PING_TIMEOUT_SECONDS``) is logged and its connection reset.

    uvicorn closes it (1011) gracefully, without a word in the log: the kernel then kept
    the socket with what it could not send for minutes, and a close with bytes still in
    the transport waited for the client to read them, for good. It is the only way a
    client that stopped reading is found on a quiet table, where the stream's own send
    deadline never runs out. Until 2026-12-05 it was closed so.
    """

    address: str | None = None  # counted in _Config.by_address until the connection ends

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # Upgraded from _HttpProtocol, which counted it until now (after its cap).
        if isinstance(self.config, _Config):
            self.address = _address(self.client)
            if self.address is not None:
                self.config.address_opened(self.address)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.address is not None and isinstance(self.config, _Config):
            self.config.address_closed(self.address)
            self.address = None
        super().connection_lost(exc)

    def keepalive_timeout(self) -> None:
        dropping = not (self.close_sent or self.transport.is_closing())
        super().keepalive_timeout()
        if dropping:
            self._drop(f"did not answer a ping in {self.ping_timeout:g} s")

    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if message["type"] == "websocket.close" and self.close_timer is not None:
            # uvicorn then closes gracefully if the client has not answered the close in
            # time, which waits for a client that stopped reading for good (a review: a
            # stream ended with a small backlog kept its connection open, with no limit).
            self.close_timer.cancel()
            self.close_timer = self.loop.call_later(
                WS_CLOSE_TIMEOUT_SECONDS, self._close_unanswered
            )

    def _close_unanswered(self) -> None:
        self._drop(f"did not answer the close in {WS_CLOSE_TIMEOUT_SECONDS:g} s")

    def _drop(self, why: str) -> None:
        client = self.scope.get("client")  # as the app sees it (behind a trusted proxy too)
        named = f"{client[0]}:{client[1]}" if client else "?"
        _LOGGER.warning(
            "WebSocket client %s of %s %s; disconnecting it", named, self.scope["path"], why
        )
        reset_connection(self.transport)


class _Config(uvicorn.Config):
    """uvicorn's configuration, with what ``_HttpProtocol`` adds: its headers and body
    deadlines, the connection caps, and the count of each client address's connections."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        headers_timeout: float,
        body_timeout: float,
        max_connections: int,
        max_connections_per_address: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self.headers_timeout = headers_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.max_connections_per_address = max_connections_per_address
        self.refusals = LogThrottle(REFUSALS_LOG_INTERVAL_SECONDS)
        self.by_address: dict[str, int] = {}  # connections open (HTTP and WebSocket)

    def address_opened(self, address: str) -> int:
        """One more connection from ``address``: how many it has open now."""
        count = self.by_address.get(address, 0) + 1
        self.by_address[address] = count
        return count

    def address_closed(self, address: str) -> None:
        count = self.by_address.pop(address, 0) - 1
        if count > 0:
            self.by_address[address] = count


def _address(client: tuple[str, int] | None) -> str | None:
    """The address a connection is counted under (its peer's, not a proxy's header)."""
    return client[0] if client else None


class _HttpProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol (httptools), with deadlines for a request's headers and
    body, a cap on their size, and caps on connections.

    A connection has ``headers_timeout`` from its opening, and from the end of each
    response (or, answered before its body ended, of its body), to deliver the next
    request's complete headers, in at most ``MAX_REQUEST_HEADER_BYTES`` (else 431, however
    they were read), or it is closed: one that sends nothing, or trickles its headers
    (slowloris), is not held for good. A request's body then has ``body_timeout`` to arrive
    whole (else 408, or closed if answered already); a pipelined request's, from the end of
    the answers before it. A chunked body's trailer fields are held to
    ``MAX_REQUEST_HEADER_BYTES`` too (else 431, or closed if answered already), and not
    handed to the app. While a request is answered (an SSE stream too) and once upgraded
    to a WebSocket, no deadline runs. A connection that would make more than
    ``max_connections`` (HTTP and WebSocket), or more than ``max_connections_per_address``
    from its client's address (0: no such cap), is answered 503 and closed as soon as it
    is accepted, before it is read.
    """

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        assert isinstance(config, _Config)
        self.limits = config
        self.headers_deadline: asyncio.TimerHandle | None = None
        self.header_bytes = 0  # read while the headers of a request are awaited
        self.header_begun = False  # a byte other than CR or LF read since they are awaited
        self.headers_midway = False  # they began before they were awaited
        self.raw_tail = b""  # the last bytes counted raw, for an end of headers split by reads
        self.body_deadline: asyncio.TimerHandle | None = None
        self.parsed_header_bytes = 0  # of the request being parsed: its target and fields
        self.reading_body = False  # the latest request's headers are parsed, its body is not
        self.body_in_read = False  # the parser gave body data in the read it is fed now
        self.after_chunk_header = False  # a chunk's size read, none of its data since
        self.read_now: bytes | None = None  # that read, if a body was read at its start
        self.trailer_bytes = 0  # raw, after the body's last data: chunk framing and trailers
        self.parsed_trailer_bytes = 0  # the trailer fields the parser gave
        self.refused = False  # headers too large: what is parsed after them is ignored
        self.address: str | None = None  # counted in limits.by_address until released

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.address = _address(self.client)
        from_address = 0 if self.address is None else self.limits.address_opened(self.address)
        per_address = self.limits.max_connections_per_address
        if len(self.connections) > self.limits.max_connections:
            self._refuse(
                "",
                "%d connections open, the most served at once: refusing new ones%s",
                len(self.connections) - 1,
            )
        elif per_address and from_address > per_address:
            self._refuse(
                "address",
                "%d connections open from %s, the most served to one address at once "
                "(web.max_connections_per_address): refusing new ones from it%s",
                from_address - 1,
                self.address,
            )
        else:
            self._start_headers_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_headers_deadline()
        self._stop_body_deadline()
        self._release_address()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        if self.refused:
            return
        self._stop_body_deadline()
        self._release_address()  # _WebSocketProtocol counts the connection from now on
        super().handle_websocket_upgrade()

    def _release_address(self) -> None:
        if self.address is not None:
            self.limits.address_closed(self.address)
            self.address = None

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        awaiting = self.headers_deadline is not None
        if awaiting and not self.headers_midway:
            # Awaiting a request's headers: this read's bytes up to their end (all of it if
            # they do not end in it), counted before the parser takes them. What the
            # parser drops (spaces before a value) counts too (until 2026-12-07 100 KB of
            # them in one read were served).
            self.header_bytes += self._until_section_end(data)
            if self.header_bytes > MAX_REQUEST_HEADER_BYTES:
                self._headers_too_large()
                return
        reading = self.cycle if self.reading_body else None
        self.body_in_read = False
        self.read_now = data if reading is not None else None
        try:
            super().data_received(data)
        finally:
            self.read_now = None
        if self.refused or self.transport.is_closing():
            return
        if awaiting and self.headers_midway and self.headers_deadline is not None:
            # Headers begun before their deadline (while the response before was sent):
            # where they end is not known from the reads; a read that did not end them.
            self.header_bytes += len(data)
            if self.header_bytes > MAX_REQUEST_HEADER_BYTES:
                self._headers_too_large()
            return
        if not self.reading_body:
            return
        # A chunked body still read: what came after its data, its trailer fields (the
        # parser buffers an unfinished one) and chunk framing, counted raw.
        if reading is self.cycle and not self.body_in_read:
            counted = self._until_section_end(data)  # none of its data: all of it
        elif self.after_chunk_header and not _NONZERO_CHUNK_AT_END.search(data[-1024:]):
            # Its last chunk in this read, after its data (or its headers): from there.
            last = data.rfind(b"\r\n0")
            counted = len(data) - last - 2 if last >= 0 else len(data)
        else:
            return  # the read ends in its data, or at the size of its next chunk
        self.trailer_bytes += counted
        if self.trailer_bytes > MAX_REQUEST_HEADER_BYTES:
            self._trailers_too_large()

    def _until_section_end(self, data: bytes) -> int:
        """How many bytes of ``data`` the headers (or trailers) counted raw take: up to the
        blank line that ends them (found across reads too), else all of it. The blank
        lines a client may send before a request are not an end."""
        start = 0
        if not self.header_begun:
            start = len(data) - len(data.lstrip(b"\r\n"))
            if start == len(data):
                return len(data)
            self.header_begun = True
        joined = self.raw_tail + data[start : start + 3]
        end = joined.find(b"\r\n\r\n")
        if end >= 0:
            return start + end + 4 - len(self.raw_tail)
        end = data.find(b"\r\n\r\n", start)
        if end >= 0:
            return end + 4
        self.raw_tail = (self.raw_tail + data[max(start, len(data) - 3) :])[-3:]
        return len(data)

    # The parser's callbacks. Headers that end in the read they started in are parsed
    # whole before the raw count above sees them (a 100 KB header in one read was served
    # until 2026-12-07, and so were headers whose last read ended them past the limit):
    # what the parser gives, the request's target and header fields, is counted too.

    def on_message_begin(self) -> None:
        self.parsed_header_bytes = 0
        self.reading_body = False
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self.parsed_header_bytes += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.refused:
            return
        if self.reading_body:
            # A trailer field (after a chunked body): counted, and not handed to the app
            # (uvicorn added it to the request's headers, with no limit: one connection
            # took the server from 85 MB to 1.1 GB in 10 s; a review, 2026-12-07).
            self.parsed_trailer_bytes += len(name) + len(value) + 4
            if self.parsed_trailer_bytes > MAX_REQUEST_HEADER_BYTES:
                self._trailers_too_large()
            return
        self.parsed_header_bytes += len(name) + len(value) + 4  # ": " and CRLF
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._stop_headers_deadline()  # a WebSocket upgrade too, whose protocol takes over
        if self.refused:
            return
        if self.parsed_header_bytes > MAX_REQUEST_HEADER_BYTES:
            self._headers_too_large()
            return
        super().on_headers_complete()
        if self.parser.should_upgrade() and self._should_upgrade():
            return
        self.reading_body = True
        self.after_chunk_header = False
        self.trailer_bytes = self.parsed_trailer_bytes = 0
        self.header_begun = True  # (a blank line now ends the trailers)
        self.raw_tail = b""
        if not self._queued(self.cycle):
            self._start_body_deadline()  # stopped at once if it has no body
        # Else from the end of the answers before it (on_response_complete): an earlier
        # response (an SSE stream) may last, and the 408 is not to be written into it.

    def on_chunk_header(self) -> None:
        self.after_chunk_header = True  # the last chunk's (size 0): its trailers follow

    def on_chunk_complete(self) -> None:
        self.after_chunk_header = False

    def on_body(self, body: bytes) -> None:
        if self.refused:
            return
        self.body_in_read = True
        self.after_chunk_header = False
        self.trailer_bytes = 0  # trailers come after the last of the body
        self.raw_tail = b""
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._stop_body_deadline()
        read = self.reading_body
        if read and self.read_now is not None and not self.body_in_read:
            # Its trailers ended in this read, which began in them: counted up to their end.
            self.trailer_bytes += self._until_section_end(self.read_now)
            self.read_now = None
            if self.trailer_bytes > MAX_REQUEST_HEADER_BYTES:
                self._trailers_too_large()
                return
        self.read_now = None
        self.reading_body = False
        if self.refused:
            return
        super().on_message_complete()
        if (
            read
            and self.cycle.response_complete
            and not self.pipeline
            and not self.transport.is_closing()
        ):
            # Answered before its body ended: the next request's headers from now, and
            # uvicorn's keep-alive timeout (from its answer's end) for an idle connection.
            self._start_headers_deadline()
            self._unset_keepalive_if_required()
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    def on_response_complete(self) -> None:
        started = self.pipeline[-1][0] if self.pipeline else None  # a request read, started now
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if started is not None:
            if started is self.cycle and self.reading_body:
                self._start_body_deadline()  # its body still arriving
            return
        if self.refused:
            # A request after it had headers too large: its 431 once every answer before
            # it is sent (_headers_too_large).
            self.transport.write(_TOO_LARGE)
            self._close()
        elif not self.reading_body:
            self._start_headers_deadline()
        # Else answered before its body ended: the body deadline still runs, then the
        # headers deadline (on_message_complete). Until 2026-12-07 the rest of the body was
        # counted as the next request's headers, and a keep-alive client was answered 431.

    def _queued(self, cycle: Any) -> bool:
        """Whether ``cycle`` waits for the answers to requests before it (pipelined)."""
        return any(queued is cycle for queued, _ in self.pipeline)

    def _headers_too_large(self) -> None:
        """431 and closed. If requests before it are still answered, the connection is not
        read any more, and the 431 and the close wait for their answers to be sent
        (on_response_complete): until 2026-12-07 they were dropped. Nothing more from the
        connection is parsed."""
        self.refused = True
        self.reading_body = False
        self._stop_headers_deadline()
        self._stop_body_deadline()
        if self.transport.is_closing():
            return
        if (self.cycle is not None and not self.cycle.response_complete) or self.pipeline:
            self.flow.pause_reading()  # what is read anyway is dropped (data_received)
            return
        self.transport.write(_TOO_LARGE)
        self._close()

    def _trailers_too_large(self) -> None:
        """A request whose trailer fields took more than ``MAX_REQUEST_HEADER_BYTES``:
        431 and closed, only closed if its answer has begun (or waits for an earlier one)."""
        self._abandon(_TOO_LARGE)

    def _abandon(self, answer: bytes) -> None:
        """End the request whose body is read: ``answer`` if nothing was answered to it
        yet and no earlier response is still sent, then closed. Its handler, waiting for
        the body, is told of a disconnect. Nothing more from the connection is parsed."""
        self.refused = True
        self.reading_body = False
        self._stop_headers_deadline()
        self._stop_body_deadline()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if not (cycle.response_started or self._queued(cycle)):
            self.transport.write(answer)
        self._close()

    def _start_headers_deadline(self) -> None:
        self._stop_headers_deadline()
        self.header_bytes = 0
        self.header_begun = False
        self.raw_tail = b""
        # The next request already begun (its target parsed: the parser begins a message
        # as soon as the one before ends).
        self.headers_midway = self.parsed_header_bytes > 0
        self.headers_deadline = self.loop.call_later(
            self.limits.headers_timeout, self._headers_too_late
        )

    def _stop_headers_deadline(self) -> None:
        if self.headers_deadline is not None:
            self.headers_deadline.cancel()
            self.headers_deadline = None

    def _headers_too_late(self) -> None:
        self.headers_deadline = None
        if not self.transport.is_closing():
            self._close()

    def _start_body_deadline(self) -> None:
        self._stop_body_deadline()
        self.body_deadline = self.loop.call_later(self.limits.body_timeout, self._body_too_late)

    def _stop_body_deadline(self) -> None:
        if self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = None

    def _body_too_late(self) -> None:
        self.body_deadline = None
        if self.transport.is_closing():
            return
        if self.flow.read_paused or self.cycle.waiting_for_100_continue:
            # The server holds the body back: its handler has not read what came, or has
            # not asked for it yet.
            self._start_body_deadline()
            return
        self._abandon(_TOO_SLOW)  # its handler, waiting for the body, is told of a disconnect

    def _close(self) -> None:
        if self.transport.get_write_buffer_size():
            # What it was sent, not read: close() would wait for the client to read it.
            reset_connection(self.transport)
        else:
            self.transport.close()

    def _refuse(self, key: str, message: str, *args: Any) -> None:
        held = self.limits.refusals.due(key)
        if held is not None:
            since = f" ({held} more refused since the last of these messages)" if held else ""
            _LOGGER.warning(message, *args, since)
        self.transport.write(_REFUSAL)
        self.transport.close()


# The end of a read that stops at a chunk's size line, of a chunk that is not the last
# (_HttpProtocol.data_received: its data, not trailers, follows).
_NONZERO_CHUNK_AT_END = re.compile(rb"\n[0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*(?:;[^\r\n]*)?\r\n\Z")


class _QuietServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.served = app  # the app served now (WebServer.serve), whose streams a stop ends

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Stop taking connections, then end every stream: an SSE response lasts as long
        # as its client, and would hold the shutdown for its whole grace period.
        for server in self.servers:
            server.close()
        stop_streams(self.served)
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # The owning command handles Ctrl-C and stops the server through should_exit.
        yield


# accept()'s errors for want of a resource, as asyncio takes them (selector_events).
_OUT_OF_RESOURCE = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class _ListeningSocket(socket.socket):
    """A listening socket whose accept(), once out of descriptors, fails once per turn of
    the event loop, not for every connection queued.

    CPython 3.11's asyncio goes on calling accept() after such an error, up to the backlog
    (2,048) times in one turn, and for each failure logs a traceback and schedules a retry
    of its own: thousands of retries a second, each failing again, the process at 100 %
    CPU (a pentest: 537,716 errors in 40 s, the tables' inputs held back 20 s), and as many
    errors again at shutdown, for the retries of a socket closed. Here the accept() calls
    after the first failure of a turn find the queue "empty" (what asyncio stops on): one
    error, one retry (asyncio's, in 1 s).
    """

    def accept(self) -> tuple[socket.socket, Any]:
        if getattr(self, "_resting", False):
            raise BlockingIOError(errno.EAGAIN, "not accepting until the next turn")
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno in _OUT_OF_RESOURCE:
                with contextlib.suppress(RuntimeError):  # outside asyncio: nothing to hold
                    asyncio.get_running_loop().call_soon(self._rest_over)
                    self._resting = True
            raise

    def _rest_over(self) -> None:
        self._resting = False


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (port 0: a free one), for a
    ``WebServer``; a ``StudioError`` if it cannot be had (a port taken, an address that is
    not this machine's).

    A process takes it before anything else it does can be seen (the controller: before its
    broker and its event log), so that a port clash stops it having touched nothing."""
    sock = _ListeningSocket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # Listening holds the port: two sockets merely bound with SO_REUSEADDR share it.
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise StudioError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


class WebServer:
    """``async with WebServer(app, host, port)``: serves until the block exits.

    ``sock``: a socket from ``listening_socket(host, port)`` to serve on (the server then
    owns it); without it, the server takes its own at once. ``headers_timeout``,
    ``body_timeout``, ``max_connections`` and ``max_connections_per_address`` (0: none):
    ``_HttpProtocol``'s (``REQUEST_HEADERS_TIMEOUT_SECONDS``, ``REQUEST_BODY_TIMEOUT_SECONDS``,
    ``MAX_CONNECTIONS``, lowered to fit the open files limit by ``connection_cap``, and
    ``MAX_CONNECTIONS_PER_ADDRESS``, the setting ``web.max_connections_per_address``). Its
    creation raises the process's open files limit (``raise_open_files_limit``) and limits
    asyncio's accept() errors in the log."""

    def __init__(
        self,
        app: FastAPI,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        sock: socket.socket | None = None,
        headers_timeout: float = REQUEST_HEADERS_TIMEOUT_SECONDS,
        body_timeout: float = REQUEST_BODY_TIMEOUT_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
        max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS,
    ) -> None:
        _limit_accept_errors()
        max_connections = connection_cap(max_connections, raise_open_files_limit())
        self.host = host
        self._sock = listening_socket(host, port) if sock is None else sock
        self.port = int(self._sock.getsockname()[1])
        self._wrapped = _WithTransport(app)
        config = _Config(
            self._wrapped,
            headers_timeout=headers_timeout,
            body_timeout=body_timeout,
            max_connections=max_connections,
            max_connections_per_address=max_connections_per_address,
            http=_HttpProtocol,
            backlog=LISTEN_BACKLOG,
            timeout_keep_alive=KEEP_ALIVE_TIMEOUT_SECONDS,
            log_level="warning",
            lifespan="off",
            ws=_WebSocketProtocol,
            ws_max_size=WS_MAX_FRAME_BYTES,
            ws_ping_interval=WS_PING_INTERVAL_SECONDS,
            ws_ping_timeout=WS_PING_TIMEOUT_SECONDS,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
        self._server = _QuietServer(config, app)
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def connections(self) -> int:
        """How many connections it holds now (HTTP and WebSocket; ``max_connections``)."""
        return len(self._server.server_state.connections)

    def serve(self, app: FastAPI) -> None:
        """Answer with ``app`` from now on, in place of the app given at the start (the
        controller answers with ``studio.web.starting`` while it replays its log). A
        request or stream already being answered stays with the app that took it."""
        self._wrapped.app = app
        self._server.served = app

    async def __aenter__(self) -> WebServer:
        self._task = asyncio.create_task(self._server.serve([self._sock]), name=f"web:{self.port}")
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Stop serving (the block's exit does it too; a second stop does nothing more):
        for a server entered before what its app serves, which is to stop first.

        Requests still being answered once it has stopped, or once its stop is cut short
        (a controller stopping on a lost database lock cancels it), are cut off: answered
        503, in one line of the log (_WithTransport). Until 2026-12-07 they were left
        waiting, and the process's end cancelled them: a traceback each."""
        self._wrapped.stopping = True
        self._server.should_exit = True
        try:
            if self._task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    try:
                        async with asyncio.timeout(GRACEFUL_SHUTDOWN_SECONDS + 2):
                            await self._task
                    except TimeoutError:
                        self._task.cancel()
        finally:
            self._cut_off_requests()
            self._sock.close()

    def _cut_off_requests(self) -> None:
        """Cancel the requests still being answered (uvicorn's own stop, once its grace
        ran out, cancelled its own and said so)."""
        left = [task for task in self._server.server_state.tasks if not task.done()]
        for task in left:
            task.cancel()
        if left:
            _LOGGER.warning(
                "web server on port %d stopped with requests still being answered: %d cut "
                "off (answered 503)",
                self.port,
                len(left),
            )
