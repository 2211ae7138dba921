"""What the web server answers while the controller starts: its event log may take minutes
to replay (a whole one after an upgrade), and a console that accepted connections and
answered none looked dead. Every request gets a 503 saying what the start is doing, with
``Retry-After``; the console's pages reload themselves until the controller runs."""

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
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS), "Cache-Control": "no-store"}
        if "text/html" in request.headers.get("accept", "") and not path.startswith("api/"):
            page = _PAGE.format(retry=RETRY_AFTER_SECONDS, doing=html.escape(what()))
            return HTMLResponse(page, status_code=503, headers=headers)
        return JSONResponse(
            {"status": "starting", "detail": f"the controller is starting: {what()}"},
            status_code=503,
            headers=headers,
        )

    @app.websocket("/{path:path}")
    async def starting_stream(websocket: WebSocket, path: str) -> None:
        # Closed before it is accepted, a WebSocket gets an HTTP 403 instead: accepted,
        # the client sees why and when to come back.
        await websocket.accept()
        await websocket.close(WS_TRY_AGAIN_LATER, f"the controller is starting: {what()}"[:120])

    return app


__all__ = ["RETRY_AFTER_SECONDS", "WS_TRY_AGAIN_LATER", "starting_app"]
