"""Application factory."""

from __future__ import annotations

import json

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from studio import __version__, console
from studio.errors import StoreError
from studio.store.database import serving_readers
from studio.web import api, streams
from studio.web.context import WebContext

# The largest request body read, from anyone (FastAPI reads a body before the route's
# auth dependency runs). The biggest honest one, a user form or a manager action with its
# reason, is a few KiB; without a bound a stranger's 200 MB body took the server's peak
# memory from 89 to 736 MB before the 401.
MAX_BODY_BYTES = 1024 * 1024


class RefuseNul:
    """400 for a request whose path or query holds a NUL character (``%00``).

    No id, name or time has one, and PostgreSQL refuses text with one: each such URL
    that reached a query was a 500 there (and a plain miss on SQLite).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (
            "\x00" in scope["path"] or b"%00" in scope.get("query_string", b"")
        ):
            body = json.dumps({"detail": "a NUL character (%00) is not allowed in a URL"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)


class ApiHeaders:
    """``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff`` on every HTTP
    answer under ``/api`` and on ``/openapi.json`` (the console's pages get theirs from its
    SecurityHeaders).

    The JSON holds tables, rounds, players and alerts: no cache, a shared proxy's or the
    browser's, is to keep it, and no browser is to read it as anything but its type. Until
    2026-12-06 the API's answers had neither, and until 2026-12-07 the API's description
    (gated as a read). A header the route set itself is kept (the event stream's own
    ``Cache-Control``); WebSockets pass untouched.
    """

    HEADERS = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))
    PATHS = frozenset({"/api", "/openapi.json"})

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path not in self.PATHS and not path.startswith("/api/"):
            await self.app(scope, receive, send)
            return

        async def add_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(n, v) for n, v in self.HEADERS if n not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, add_headers)


class BoundedReads:
    """Each HTTP request's own database reads are bounded by ``Database.read_timeout``
    (:func:`serving_readers`): a database that stopped answering held a console page or a
    REST read, and a pooled connection, until the controller stopped or the database
    answered again; now the reader gets a 503 saying so. Outermost, so that the CSRF
    check's session read is bounded too. WebSockets pass untouched: the handshake bounds
    its session's read itself (``streams.stream_allowed``, the console's socket), and a
    stream's later reads (its session's re-checks) run in tasks of their own, unbounded.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with serving_readers():
            await self.app(scope, receive, send)


def _install_docs(app: FastAPI, ctx: WebContext) -> None:
    """``/openapi.json`` (the REST API's description) for whoever may read the REST API.

    FastAPI served it to anyone: the map of every route, parameter and body. It takes
    the REST reads' own dependency, so its answer too: 401 JSON for a stranger, browser
    or not. There are no HTML doc pages (``/docs``, ``/redoc``): FastAPI's load their
    scripts from a CDN (cdn.jsdelivr.net) on the console's origin, without an integrity
    check, and studio machines have no internet anyway. Feed the JSON to a local viewer.
    """
    reader = Depends(api.reader_dependency(ctx))

    @app.get("/openapi.json", include_in_schema=False, dependencies=[reader])
    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())


async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 for a request FastAPI could not read into a route's parameters (a body that is
    no JSON object, a query parameter of the wrong type): each error's ``type``, ``loc``
    and ``msg``, as the API's own 422s (``api.fail``), never the input.

    FastAPI's own answer echoed each error's input: up to the whole body (1 MiB) sent
    back, and a body with NaN, infinity or a lone surrogate in it (``[NaN]``,
    ``"\\ud800"``) could not be written as JSON, so the answer was a plain-text 500
    without the API's headers (until 2026-12-07), which a platform is told to send again.
    """
    assert isinstance(exc, RequestValidationError)
    errors = [{key: error[key] for key in ("type", "loc", "msg")} for error in exc.errors()]
    return JSONResponse({"detail": errors}, status_code=422)


async def database_error(request: Request, exc: Exception) -> JSONResponse:
    """503 for the database's error (away, or no answer within its time limit): the same
    request may be sent again. The console, when installed, answers its pages with its
    own error page (``studio.console.pages``)."""
    return JSONResponse({"detail": str(exc)}, status_code=503)


def create_app(ctx: WebContext) -> FastAPI:
    # FastAPI's own docs routes are open to anyone (and its HTML pages load a CDN's
    # scripts): _install_docs serves the JSON alone, to readers of the API.
    app = FastAPI(
        title="Studio controller",
        version=__version__,
        max_body_size=MAX_BODY_BYTES,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.ctx = ctx
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StoreError, database_error)
    app.include_router(streams.build_router(ctx))
    app.include_router(api.build_router(ctx))
    _install_docs(app, ctx)
    console.install(app, ctx)
    app.add_middleware(RefuseNul)
    app.add_middleware(ApiHeaders)  # RefuseNul's 400s under /api get them too
    app.add_middleware(BoundedReads)  # outermost: every read of a request is bounded

    reader = api.reader_dependency(ctx)

    @app.get("/api/health")
    async def health(request: Request) -> dict[str, object]:
        """Liveness for anyone (a load balancer, monitoring): ``{"status": "ok"}``. The
        details, the build and the number of open streams, for whoever may read the REST
        API (a console session or the platform token), as every other read. Until
        2026-12-05 anyone had them."""
        try:
            await reader(request)
        except HTTPException:
            return {"status": "ok"}
        return {"status": "ok", "version": __version__, "listeners": ctx.fanout.listener_count}

    return app


__all__ = ["MAX_BODY_BYTES", "ApiHeaders", "BoundedReads", "WebContext", "create_app"]
