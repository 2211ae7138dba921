"""What the web server answers while the controller starts: its event log may take minutes
to replay (a whole one after an upgrade), and a console that accepted connections and
answered none looked dead. Every request gets a 503 saying what the start is doing, with
``Retry-After``; the console's pages reload themselves until the controller runs; an SSE
client is told to come back; a WebSocket is refused (HTTP 403) before it is accepted."""

from __future__ import annotations

import html
from collections.abc import Callable

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, Response

RETRY_AFTER_SECONDS = 5
# RFC 6455 7.4.1: "Try Again Later".
WS_TRY_AGAIN_LATER = 1013

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{retry}">
<title>Studio controller starting</title></head>
<body><h1>The controller is starting</h1><p>{doing}.</p>
<p>This page reloads itself every {retry} seconds.</p></body></html>
"""


def starting_app(doing: Callable[[], str | None]) -> FastAPI:
    """An app answering 503 to every request; ``doing()`` says what the start is doing
    (in words for anyone: no table, user or secret is named)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    def what() -> str:
        return doing() or "starting"

    @app.api_route(
        "/{path:path}",
        methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        include_in_schema=False,
    )
    async def starting(request: Request, path: str) -> Response:
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS), **_HEADERS}
        accept = request.headers.get("accept", "")
        if "text/event-stream" in accept:
            # An EventSource gives up for good on any answer but a 200 event stream (a
            # review): this one asks it to come back in RETRY_AFTER_SECONDS, its last
            # event id kept, and ends.
            comment = f": the controller is starting: {what()}".replace("\n", " ")
            body = f"retry: {RETRY_AFTER_SECONDS * 1000}\n{comment}\n\n"
            return Response(body, media_type="text/event-stream", headers=_HEADERS)
        if "text/html" in accept and not path.startswith("api/"):
            page = _PAGE.format(retry=RETRY_AFTER_SECONDS, doing=html.escape(what()))
            return HTMLResponse(page, status_code=503, headers=headers)
        return JSONResponse(
            {"status": "starting", "detail": f"the controller is starting: {what()}"},
            status_code=503,
            headers=headers,
        )

    @app.websocket("/{path:path}")
    async def starting_stream(websocket: WebSocket, path: str) -> None:
        # Refused before it is accepted (the client sees an HTTP 403 and backs off): one
        # accepted and closed at once looked connected, and the console reconnected every
        # second for the whole replay (a review).
        await websocket.close(WS_TRY_AGAIN_LATER)

    return app


# Every answer of the starting app: nothing to cache, sniff, frame or run (the page has
# no script and no style: the console's own headers are stricter than it needs).
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "same-origin",
}


__all__ = ["RETRY_AFTER_SECONDS", "WS_TRY_AGAIN_LATER", "starting_app"]
