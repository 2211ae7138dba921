"""Requests the web server's stop cuts off end quietly: 503, one line in the log.

A drill (2026-12-07): a controller stopping on a lost database lock left two `GET
/api/tables/{t}` waiting on the database; its stop was cut short (the lock's watch cancels
it every 5 s), the requests were cancelled as the process ended, and uvicorn logged each as
"Exception in ASGI application" with a ~128-line traceback, burying the ERROR the runbook
tells the operator to look for. Now a request still being answered once the server stops
(its stop cut short too) is cancelled and answered 503, and the stop says how many in one
line. Errors of handlers at other times are logged as before.

A real server on a real port; uvicorn's own logger is read as well (it does not propagate
to the root logger, where caplog listens).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from studio.web import WebServer


class Handlers:
    """Handlers that wait as the controller's did, on a database that does not answer."""

    def __init__(self) -> None:
        self.inner: dict[str, asyncio.Future[None]] = {}  # by request

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/hangs/{name}")
        async def hangs(name: str) -> dict[str, str]:
            # As ControllerService._shielded: an answer shielded from the request, which only
            # the service's stop (cancelling the task shielded) or the request's own
            # cancellation ends.
            inner: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.inner[name] = inner
            await asyncio.shield(inner)
            return {"ok": "yes"}

        @app.get("/fails")
        async def fails() -> dict[str, str]:
            raise RuntimeError("a handler's own bug")

        @app.get("/cancelled")
        async def cancelled() -> dict[str, str]:
            raise asyncio.CancelledError

        return app


@contextlib.contextmanager
def uvicorn_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """uvicorn's records in caplog too: its logger has handlers of its own and does not
    propagate, and its configuration (made with a server's) replaces its handlers."""
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(caplog.handler)
    try:
        yield
    finally:
        uvicorn_logger.removeHandler(caplog.handler)


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info is not None]


async def test_requests_cut_off_by_a_stop_cut_short_are_answered_503_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    handlers = Handlers()
    server = WebServer(handlers.app(), port=0)
    with uvicorn_logged(caplog):
        await stop_cut_short(server, handlers, caplog)
    assert tracebacks(caplog) == []
    assert not [r for r in caplog.records if "ASGI" in r.getMessage()]
    noted = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(noted) == 1, noted
    assert "stopped with requests still being answered: 1 cut off (answered 503)" in noted[0]


async def stop_cut_short(
    server: WebServer, handlers: Handlers, caplog: pytest.LogCaptureFixture
) -> None:
    async with server, httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        # While it serves, a handler's error, and a cancellation, are logged as ever.
        assert (await http.get("/fails")).status_code == 500
        assert (await http.get("/cancelled")).status_code == 500
        shown = tracebacks(caplog)
        assert len(shown) == 2 and all("Exception in ASGI application" in m for m in shown)
        caplog.clear()

        # Two requests waiting on the "database": one the service's stop ends (its inner
        # task cancelled), one still waiting once the server's stop is cut short.
        ended_by_service = asyncio.create_task(http.get("/hangs/service"))
        left_waiting = asyncio.create_task(http.get("/hangs/left"))
        async with asyncio.timeout(20):
            while len(handlers.inner) < 2:
                await asyncio.sleep(0.02)
        # The controller's stop: the server's stop first, which waits for the requests ...
        stopping = asyncio.create_task(server.stop())
        await asyncio.sleep(0.3)
        handlers.inner["service"].cancel()  # ... the service stops meanwhile ...
        first = await asyncio.wait_for(ended_by_service, 20)
        assert first.status_code == 503
        assert first.json()["status"] == "stopping"
        stopping.cancel()  # ... and the lock's watch cuts the stop short
        with contextlib.suppress(asyncio.CancelledError):
            await stopping
        # Before: still waiting here, until the process's end cancelled it (a traceback).
        second = await asyncio.wait_for(left_waiting, 20)
        assert second.status_code == 503
