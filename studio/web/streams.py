"""Live streams of one table: WebSocket ``/ws/tables/{table}`` and SSE ``/api/tables/{table}/events``.

Both send the same JSON objects: ``{"table", "channel", "data"}`` where channel is
``round_events``, ``round_state``, ``alerts``, ``dealer_prompt``, ``devices`` or
``stream_reset``. A new connection first receives the latest state, prompt and device
status (the fan-out's snapshots: ``round_state``, ``dealer_prompt``, ``devices``), then
everything live. Each message has an event id (``{run}-{n}``): SSE sends it as the event's
id, the table WebSocket as the frame's ``"id"`` key. A reconnect that names the last one
it got (``?after=``; SSE: also ``Last-Event-ID``, which wins) gets what it missed instead
of the snapshots, while the fan-out still holds all of it (``Fanout.listen(resume=)``); an id it
cannot resume from starts the stream afresh, as a new one, after a ``stream_reset``
message saying why (it has no event id: SSE sends no ``id`` line, the WebSocket no
``"id"`` key).

A stream ends when the client cannot keep up (its backlog overflows, or one message
waits longer than ``SEND_TIMEOUT_SECONDS`` for the client to take it), when a console
user's session ends, and when the server stops; a WebSocket says which with its close
code (``CLOSE_CODES``, 1008 for the session). A client too slow, SSE or WebSocket, is
logged and has its connection reset (``_drop``), with the transport the web server puts
in the scope; the web server resets a WebSocket whose client stops answering its pings.

Only the game platform (its token) or a logged-in console user may listen: the
stream carries every bet and card of the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import (
    APIRouter,
    FastAPI,
    HTTPException,
    Request,
    WebSocket,
    WebSocketDisconnect,
    status,
)
from sse_starlette.sse import EventSourceResponse, SendTimeoutError
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store.database import serving_readers
from studio.streams import EVENT_ID, EndReason, Fanout
from studio.web.context import WebContext

_LOGGER = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
# A client that leaves one message unread this long is too slow: its stream ends. Without
# it a client that stopped reading held its handler for good, since a full socket never
# drains and the close frame cannot be sent either.
SEND_TIMEOUT_SECONDS = 10.0
# A stream's socket send buffer (SSE; WebSocket since 2026-12-05). Left to the kernel's
# autotuning it grew to ~3.7 MB for a client that stopped reading, so the stream found it
# too slow only once that was full (SSE: 3 min 40 s at 20 KB/s; 27 s now) rather than
# SEND_TIMEOUT_SECONDS after it stopped.
STREAM_SEND_BUFFER_BYTES = 64 * 1024
# Where the web server (studio.web.server) puts the connection's transport in an HTTP
# request's or a WebSocket's scope extensions; absent under another ASGI server or a test
# client.
TRANSPORT_EXTENSION = "studio.transport"
# WebSocket close codes (RFC 6455 registry) for a stream the fan-out ended.
CLOSE_CODES = {EndReason.TOO_SLOW: 1013, EndReason.SHUTDOWN: 1012}  # try again later; restart
Listener = Literal["platform", "session"]


async def stream_allowed(conn: HTTPConnection, ctx: WebContext) -> Listener | None:
    """The game platform (its token, as a bearer header or ``?token=``) or a console user
    on a page of this site (the cookie alone does not say which site opened the stream).

    The session's read is bounded as a request's (``Database.read_timeout``), a WebSocket's
    handshake too, which the app's ``BoundedReads`` leaves alone: a socket opened while the
    database did not answer waited until it did. Past it, or the database away, a
    :class:`StoreError`."""
    from studio.console.auth import bearer_matches

    token = ctx.extras.get("platform_token")
    if token:
        # As bytes: compare_digest refuses str with non-ASCII characters (a TypeError,
        # so a stranger's "?token=é" was a server error instead of a refusal).
        # A token given twice is none: only the last was compared, so "?token=bad&token=GOOD"
        # was let in (until 2026-12-05).
        given = conn.query_params.getlist("token")
        query = given[0].encode("utf-8", "replace") if len(given) == 1 else b""
        if bearer_matches(conn.headers.get("authorization"), token) or hmac.compare_digest(
            query, token.encode()
        ):
            return "platform"
    if getattr(conn.app.state, "console_auth", None) is not None:
        from studio.console.auth import current_user, foreign_origin

        if foreign_origin(conn):
            return None
        with serving_readers():
            if await current_user(conn) is not None:
                return "session"
    return None


def _session_end(conn: HTTPConnection, listener: Listener) -> set[asyncio.Task[None]]:
    """A task that finishes when a console user's session does; none for the platform."""
    if listener != "session":
        return set()
    from studio.console.auth import session_ended

    return {asyncio.create_task(session_ended(conn), name="stream-session")}


def stop_streams(app: FastAPI) -> None:
    """The server is stopping: end every stream of ``app`` now and any that opens later.

    A stream lasts as long as its client does, so without this a stopping server
    waited out its grace period on every open SSE response.
    """
    app.state.streams_stopped = True
    ctx = getattr(app.state, "ctx", None)
    if isinstance(ctx, WebContext):
        ctx.fanout.end_streams()


def _stopped(conn: HTTPConnection) -> bool:
    return bool(getattr(conn.app.state, "streams_stopped", False))


async def _close(websocket: WebSocket, code: int) -> None:
    # Bounded: a client that does not read cannot take a close frame either. Its
    # TimeoutError is the caller's: that client is too slow, and dropped.
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
            await websocket.close(code=code)


def _transport(scope: Scope) -> asyncio.Transport | None:
    """The connection's transport, where the web server gave it (``TRANSPORT_EXTENSION``)."""
    transport: asyncio.Transport | None = (scope.get("extensions") or {}).get(TRANSPORT_EXTENSION)
    return transport


def _set_socket_option(transport: asyncio.Transport, option: int, value: int | bytes) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, option, value)


class _EventStream(EventSourceResponse):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = _transport(scope)
        if transport is not None:
            _set_socket_option(transport, socket.SO_SNDBUF, STREAM_SEND_BUFFER_BYTES)
        try:
            await super().__call__(scope, receive, self._bounded(send))
        except SendTimeoutError:
            _LOGGER.warning("SSE client of %s too slow; disconnecting it", scope.get("path"))
            if transport is not None:
                await _drop(transport)

    def _bounded(self, send: Send) -> Send:
        """``send``, with the end of the response bounded as every other message is.

        sse-starlette sends the end with no deadline: a stream that ended (too slow for its
        backlog, logged out) while its client had stopped reading waited for that client
        for good, its connection open. Now it is too slow there too, and dropped.
        """
        timeout = self.send_timeout

        async def send_bounded(message: Message) -> None:
            if (
                timeout is None
                or message["type"] != "http.response.body"
                or message.get("more_body")
            ):
                await send(message)
                return
            try:
                async with asyncio.timeout(timeout):
                    await send(message)
            except TimeoutError:
                raise SendTimeoutError() from None

        return send_bounded


def reset_connection(transport: asyncio.Transport) -> None:
    """Drop the connection of a client that stopped reading, now: a reset, fd released.

    Not close(), which waits for the client to read what is buffered (it never does):
    uvicorn closes a response the app left unfinished (or a WebSocket whose handler
    returned) that way, so the connection stayed open, its send buffer full, for as long
    as the client did. Lingering zero makes the kernel reset it rather than keep the
    unsent bytes of an orphaned socket for minutes.
    """
    _set_socket_option(transport, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _drop(transport: asyncio.Transport) -> None:
    """``reset_connection``, from the app."""
    reset_connection(transport)
    # Let uvicorn see the connection lost before the app returns: it then takes the
    # unfinished response for the client's doing and logs no "ASGI callable returned
    # without completing response".
    await asyncio.sleep(0)


def _unknown_table(ctx: WebContext, table: str) -> bool:
    # Only when the round controller runs here: a bare fan-out (tests, benchmarks, the
    # console's stand-in) has no list of tables.
    controller = ctx.controller
    return isinstance(controller, ControllerService) and table not in controller.tables


def _no_table(table: str) -> str:
    # In REST's words (the controller's UnknownTable); until 2026-12-07 "no such table".
    return f"no table {table!r}"


def _resume_from(conn: HTTPConnection) -> tuple[str | None, str | None]:
    """The stream's ``?after=`` (None: a new stream), or why it is refused (WebSocket and
    SSE; SSE's ``Last-Event-ID`` header wins over it).

    A malformed one is refused rather than ignored: ignored, the client would take the
    snapshots it got for the messages it asked for. A well-formed id the fan-out cannot
    resume from (too old, another run) starts afresh, as SSE does with it.
    """
    values = conn.query_params.getlist("after")
    if not values:
        return None, None
    if len(values) > 1:
        return None, "after: give one event id, not several"
    if not EVENT_ID.fullmatch(values[0]):
        return None, "after: not an event id ({run}-{n}, the id of a frame this stream sent)"
    return values[0], None


# The query parameters SSE takes: ``stream_allowed``'s token, ``_resume_from``'s after, and
# what EventSource polyfills add, which refused would end the stream at its first reconnect
# for good (an EventSource gives up on any answer but a 200 stream): ``lastEventId`` (the
# event-source-polyfill package's stand-in for the header, taken as it) and ``_`` (a
# cache-buster; ignored).
SSE_QUERY = ("token", "after", "lastEventId", "_")


def _unknown_query(conn: HTTPConnection, takes: tuple[str, ...]) -> list[dict[str, Any]]:
    """One error per query parameter the stream does not take, shaped as a REST read's 422
    (``studio.web.api.refuse_unknown_query``): ignored, a misspelt ``?afer=`` started the
    stream afresh as if nothing had been asked (until 2026-12-07)."""
    names = ", ".join(takes)
    return [
        {
            "type": "extra_forbidden",
            "loc": ["query", name],
            "msg": f"unknown query parameter {name!r}: this endpoint takes {names}",
        }
        for name in dict.fromkeys(conn.query_params)
        if name not in takes
    ]


def _with_id(text: str, event_id: str) -> str:
    # The message's shared JSON text plus its "id" key. The id is the stream's (an opening
    # snapshot is named by the stream's position), so it is appended, not encoded in.
    return f'{text[:-1]}, "id": {json.dumps(event_id)}}}'


def build_router(ctx: WebContext) -> APIRouter:
    router = APIRouter()

    @router.websocket("/ws/tables/{table}")
    async def table_socket(websocket: WebSocket, table: str) -> None:
        try:
            allowed = await stream_allowed(websocket, ctx)
        except StoreError as exc:  # the session's read: as a REST read's 503
            await websocket.send_denial_response(JSONResponse({"detail": str(exc)}, 503))
            return
        if allowed is None:
            await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
            return
        if _unknown_table(ctx, table):  # as REST answers; it would stay silent for good
            await websocket.send_denial_response(JSONResponse({"detail": _no_table(table)}, 404))
            return
        after, refused = _resume_from(websocket)
        if refused is not None:  # answered as the unknown table is: a reason the client can read
            await websocket.send_denial_response(JSONResponse({"detail": refused}, 400))
            return
        await websocket.accept()
        await send_stream(
            websocket,
            ctx.fanout,
            table,
            name="ws",
            watch_session=allowed == "session",
            session_close_code=status.WS_1008_POLICY_VIOLATION,
            resume=after,
            event_ids=True,
        )

    @router.get("/api/tables/{table}/events")
    async def table_events(request: Request, table: str) -> EventSourceResponse:
        allowed = await stream_allowed(request, ctx)
        if allowed is None:
            raise HTTPException(401, "log in, or send the platform token")
        if _unknown_table(ctx, table):
            raise HTTPException(404, _no_table(table))

        if unknown := _unknown_query(request, SSE_QUERY):
            raise HTTPException(422, unknown)
        # ?after= as the WebSocket takes it, a malformed one refused as there (400). Until
        # 2026-12-07 SSE ignored it: a client resuming so got the latest state, no
        # stream_reset, and took it for a resume while the messages in between were lost.
        after, refused = _resume_from(request)
        if refused is not None:
            raise HTTPException(400, refused)
        # A reconnecting EventSource sends the id of the last event it got: newer than the
        # URL's ?after=, which it sends again unchanged, so the header wins.
        resume = request.headers.get("last-event-id")
        if resume is None and (polyfilled := request.query_params.getlist("lastEventId")):
            resume = polyfilled[-1]  # a polyfill's header, read as the header is
        elif resume is not None:
            # Headers are read as Latin-1: a stream_reset's `after` echoed a UTF-8 id's
            # non-ASCII characters garbled ("Ã©" for "é"; until 2026-12-05).
            resume = resume.encode("latin-1").decode("utf-8", "replace")
        else:
            resume = after

        async def stream() -> AsyncIterator[dict[str, str]]:
            async with ctx.fanout.listen(table, resume=resume) as listener:
                if _stopped(request):
                    listener.end(EndReason.SHUTDOWN)
                ended = _session_end(request, allowed)
                getter: asyncio.Task[Any] | None = None
                try:
                    while not await request.is_disconnected():
                        getter = asyncio.create_task(listener.queue.get(), name=f"sse-get:{table}")
                        # Not wait_for, which on 3.11 can drop the cancellation of a closing stream.
                        done, _ = await asyncio.wait(
                            {getter, *ended},
                            timeout=KEEPALIVE_SECONDS,
                            return_when=asyncio.FIRST_COMPLETED,
                        )
                        if getter not in done:
                            getter.cancel()
                            if ended & done:
                                return  # logged out: the stream ends with the session
                            continue  # sse-starlette sends its own pings
                        message = getter.result()
                        if message is None:
                            return  # too slow, or the server is stopping
                        sent = {"event": message.channel.value, "data": message.text}
                        # No id line for a stream_reset: the client keeps its last id.
                        if (event_id := listener.event_id(message)) is not None:
                            sent["id"] = event_id
                        yield sent
                finally:
                    for task in (getter, *ended):
                        if task is not None:
                            task.cancel()

        return _EventStream(
            stream(), ping=int(KEEPALIVE_SECONDS), send_timeout=SEND_TIMEOUT_SECONDS
        )

    return router


async def send_stream(
    websocket: WebSocket,
    fanout: Fanout,
    table: str | None,
    *,
    name: str,
    watch_session: bool,
    session_close_code: int,
    idle_ping: str | None = None,
    resume: str | None = None,
    event_ids: bool = False,
) -> None:
    """Send the fan-out's messages of ``table`` (None: every table) to an accepted socket.

    Shared by every one-way WebSocket (table streams, the console's): it ends when the
    client leaves, when the fan-out ends the stream (``CLOSE_CODES``), when the server
    stops, when one message waits ``SEND_TIMEOUT_SECONDS`` for the client, and, with
    ``watch_session``, when the console session ends (``session_close_code``).
    ``idle_ping`` is sent after ``KEEPALIVE_SECONDS`` without a message. Its tasks are
    named ``{name}-...``. ``resume``: the event id to resume from (``Fanout.listen``);
    ``event_ids``: each frame carries its event id as an ``"id"`` key.

    A client too slow (a message, or the close frame, waited ``SEND_TIMEOUT_SECONDS``) is
    logged and its connection reset (``_drop``) where the web server gave the transport:
    the handler's return let uvicorn close it gracefully, and its close waited for the
    client to read what was buffered, for good. The socket's send buffer is
    ``STREAM_SEND_BUFFER_BYTES``, as an SSE connection's.
    """
    label = table or "*"
    transport = _transport(websocket.scope)
    if transport is not None:
        _set_socket_option(transport, socket.SO_SNDBUF, STREAM_SEND_BUFFER_BYTES)
    async with fanout.listen(table, resume=resume) as listener:
        if _stopped(websocket):
            listener.end(EndReason.SHUTDOWN)
        # Wait on the client too: a client that leaves must not keep this handler
        # (and server shutdown) waiting for the table's next message.
        closed = asyncio.create_task(_drain_client(websocket), name=f"{name}-recv:{label}")
        ended: set[asyncio.Task[None]] = set()
        if watch_session:
            from studio.console.auth import session_ended

            ended.add(asyncio.create_task(session_ended(websocket), name=f"{name}-session:{label}"))
        getter: asyncio.Task[Any] | None = None
        try:
            while True:
                getter = asyncio.create_task(listener.queue.get(), name=f"{name}-get:{label}")
                done, _ = await asyncio.wait(
                    {getter, closed, *ended},
                    timeout=KEEPALIVE_SECONDS if idle_ping is not None else None,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if not done and idle_ping is not None:
                    getter.cancel()
                    text = idle_ping
                elif getter not in done:
                    if ended & done:  # logged out: the stream ends with the session
                        await _close(websocket, session_close_code)
                    break
                elif (message := getter.result()) is None:
                    assert listener.ended is not None
                    await _close(websocket, CLOSE_CODES[listener.ended])
                    break
                else:
                    event_id = listener.event_id(message) if event_ids else None
                    text = message.text if event_id is None else _with_id(message.text, event_id)
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    await websocket.send_text(text)
        except TimeoutError:
            _LOGGER.warning(
                "WebSocket client %s (%s) of %s too slow; disconnecting it",
                _client(websocket),
                name,
                label,
            )
            if transport is not None:
                await _drop(transport)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            for task in (getter, closed, *ended):
                if task is not None:
                    task.cancel()


def _client(conn: HTTPConnection) -> str:
    client = conn.client
    return "?" if client is None else f"{client.host}:{client.port}"


async def _drain_client(websocket: WebSocket) -> None:
    # The stream is one-way: whatever the client sends, text or binary, is read and
    # dropped (a binary frame used to fail receive_text and cut the connection with no
    # close frame); reading notices the close and keeps the socket healthy.
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
