"""Live streams of one table: WebSocket ``/ws/tables/{table}`` and SSE ``/api/tables/{table}/events``.

Both send the same JSON objects: ``{"table", "channel", "data"}`` where channel is
``round_events``, ``round_state``, ``alerts``, ``dealer_prompt`` or ``devices``. A new
connection first receives the latest state and prompt, then everything live.

Only the game platform (its token) or a logged-in console user may listen: the
stream carries every bet and card of the table.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, WebSocket, WebSocketDisconnect, status
from sse_starlette.sse import EventSourceResponse
from starlette.requests import HTTPConnection

from studio.web.context import WebContext

KEEPALIVE_SECONDS = 15.0
Listener = Literal["platform", "session"]


async def stream_allowed(conn: HTTPConnection, ctx: WebContext) -> Listener | None:
    """The game platform (its token, as a bearer header or ``?token=``) or a console user
    on a page of this site (the cookie alone does not say which site opened the stream)."""
    token = ctx.extras.get("platform_token")
    if token:
        header = conn.headers.get("authorization", "")
        query = conn.query_params.get("token", "")
        if hmac.compare_digest(header, f"Bearer {token}") or hmac.compare_digest(query, token):
            return "platform"
    if getattr(conn.app.state, "console_auth", None) is not None:
        from studio.console.auth import current_user, foreign_origin

        if not foreign_origin(conn) and await current_user(conn) is not None:
            return "session"
    return None


def _session_end(conn: HTTPConnection, listener: Listener) -> set[asyncio.Task[None]]:
    """A task that finishes when a console user's session does; none for the platform."""
    if listener != "session":
        return set()
    from studio.console.auth import session_ended

    return {asyncio.create_task(session_ended(conn), name="stream-session")}


def build_router(ctx: WebContext) -> APIRouter:
    router = APIRouter()

    @router.websocket("/ws/tables/{table}")
    async def table_socket(websocket: WebSocket, table: str) -> None:
        allowed = await stream_allowed(websocket, ctx)
        if allowed is None:
            await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
            return
        await websocket.accept()
        async with ctx.fanout.listen(table) as listener:
            # Wait on the client too: a client that leaves must not keep this handler
            # (and server shutdown) waiting for the table's next message.
            closed = asyncio.create_task(_drain_client(websocket), name=f"ws-recv:{table}")
            ended = _session_end(websocket, allowed)
            try:
                while True:
                    getter = asyncio.create_task(listener.queue.get(), name=f"ws-get:{table}")
                    done, _ = await asyncio.wait(
                        {getter, closed, *ended}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if getter not in done:
                        getter.cancel()
                        if ended & done:  # logged out: the stream ends with the session
                            await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
                        break
                    message = getter.result()
                    if message is None:
                        break
                    await websocket.send_text(json.dumps(message.as_json_obj()))
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                for task in (closed, *ended):
                    task.cancel()

    @router.get("/api/tables/{table}/events")
    async def table_events(request: Request, table: str) -> EventSourceResponse:
        allowed = await stream_allowed(request, ctx)
        if allowed is None:
            raise HTTPException(401, "log in, or send the platform token")

        async def stream() -> AsyncIterator[dict[str, str]]:
            async with ctx.fanout.listen(table) as listener:
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
                            return
                        yield {
                            "event": message.channel.value,
                            "data": json.dumps(message.as_json_obj()),
                        }
                finally:
                    for task in (getter, *ended):
                        if task is not None:
                            task.cancel()

        return EventSourceResponse(stream(), ping=int(KEEPALIVE_SECONDS))

    return router


async def _drain_client(websocket: WebSocket) -> None:
    # The stream is one-way; reading notices the close and keeps the socket healthy.
    try:
        while True:
            await websocket.receive_text()
    except WebSocketDisconnect:
        return
