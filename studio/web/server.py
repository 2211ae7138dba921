"""Run uvicorn inside the caller's event loop and lifecycle (no signal capture)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator
from types import TracebackType

import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn._types import ASGISendEvent
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from studio.errors import StudioError
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
    slow."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._missing_logged = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            transport = _connection_transport(send)
            if transport is not None:
                scope.setdefault("extensions", {})[TRANSPORT_EXTENSION] = transport
            elif not self._missing_logged:
                self._missing_logged = True
                _LOGGER.warning(
                    "uvicorn does not expose the connection's transport: a stream client "
                    "that stops reading will keep its connection open"
                )
        await self.app(scope, receive, send)


class _WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets-sansio), but a client that leaves a ping
    unanswered (``WS_PING_TIMEOUT_SECONDS``) is logged and its connection reset.

    uvicorn closes it (1011) gracefully, without a word in the log: the kernel then kept
    the socket with what it could not send for minutes, and a close with bytes still in
    the transport waited for the client to read them, for good. It is the only way a
    client that stopped reading is found on a quiet table, where the stream's own send
    deadline never runs out. Until 2026-12-05 it was closed so.
    """

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


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (port 0: a free one), for a
    ``WebServer``; a ``StudioError`` if it cannot be had (a port taken, an address that is
    not this machine's).

    A process takes it before anything else it does can be seen (the controller: before its
    broker and its event log), so that a port clash stops it having touched nothing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # Listening holds the port: two sockets merely bound with SO_REUSEADDR share it.
        sock.listen(2048)  # uvicorn's backlog
    except OSError as exc:
        sock.close()
        raise StudioError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


class WebServer:
    """``async with WebServer(app, host, port)``: serves until the block exits.

    ``sock``: a socket from ``listening_socket(host, port)`` to serve on (the server then
    owns it); without it, the server takes its own at once."""

    def __init__(
        self,
        app: FastAPI,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        sock: socket.socket | None = None,
    ) -> None:
        self.host = host
        self._sock = listening_socket(host, port) if sock is None else sock
        self.port = int(self._sock.getsockname()[1])
        self._wrapped = _WithTransport(app)
        config = uvicorn.Config(
            self._wrapped,
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
        for a server entered before what its app serves, which is to stop first."""
        self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                try:
                    async with asyncio.timeout(GRACEFUL_SHUTDOWN_SECONDS + 2):
                        await self._task
                except TimeoutError:
                    self._task.cancel()
        self._sock.close()
