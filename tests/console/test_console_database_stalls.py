"""A console page (and a REST read with a console session) whose database stops answering
(a network partition, a server blocked: bytes held, the connection kept, no reset) says so
within the reads' time limit (``Database.read_timeout``): the "Not available" page, or a
503 JSON answer, naming the limit. The error page reads nothing more: a second read of the
session would have waited as long again. Until 2026-12-07 the page waited until the
controller stopped or the database answered again.

PostgreSQL through a TCP proxy that stops forwarding (``PostgresProxy.stall``); the
controller is the console tests' double (the session's read is the one stalled)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, login
from postgres_support import PostgresProxy, fresh_database

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app

READ_TIMEOUT = 3.0
CLOSING = 2.5  # closing the connection that stopped answering (asyncpg waits up to 2 s)
SAID = f"database read failed: the database gave no answer in {READ_TIMEOUT:g} s"


@pytest.mark.timeout(60)
async def test_a_console_page_whose_database_stops_answering_says_so(
    fanout: Fanout, controller: InMemoryController
) -> None:
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url), read_timeout=READ_TIMEOUT)
        try:
            await db.create_all()
            await UserStore(db, hasher=fast_hasher()).add("viewer", PASSWORD, "viewer", by="t")
            app = create_app(context(db, fanout, controller))
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                await login(http, "viewer")
                assert (await http.get("/console/rounds")).status_code == 200
                proxy.stall()
                loop = asyncio.get_running_loop()
                for path, accept in (
                    ("/console/rounds", "text/html"),
                    ("/api/rounds", "application/json"),
                ):
                    started = loop.time()
                    async with asyncio.timeout(30):  # was: until the stall ended
                        answer = await http.get(path, headers={"accept": accept})
                    took = loop.time() - started
                    assert answer.status_code == 503, (path, answer.text)
                    if accept == "text/html":
                        assert "Not available" in answer.text and SAID in answer.text
                    else:
                        assert answer.json() == {"detail": SAID}
                    assert READ_TIMEOUT <= took < READ_TIMEOUT + CLOSING, (path, took)
                proxy.resume()
                assert (await http.get("/console/rounds")).status_code == 200
        finally:
            proxy.resume()
            await proxy.cut()
            await db.close(wait=1)


@pytest.mark.timeout(60)
async def test_a_console_page_whose_database_refuses_connections_says_so(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """The server gone (connections reset, new ones refused): a console page, a REST read
    with a console session and the audit page answered 500 Internal Server Error."""
    refused = "database read failed: the database connection failed"
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url), read_timeout=READ_TIMEOUT)
        try:
            await db.create_all()
            await UserStore(db, hasher=fast_hasher()).add("viewer", PASSWORD, "viewer", by="t")
            app = create_app(context(db, fanout, controller))
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                await login(http, "viewer")
                assert (await http.get("/console/rounds")).status_code == 200
                await proxy.cut()
                for path, accept in (
                    ("/console/rounds", "text/html"),
                    ("/api/rounds", "application/json"),
                    ("/console/audit", "text/html"),
                ):
                    async with asyncio.timeout(20):
                        answer = await http.get(path, headers={"accept": accept})
                    assert answer.status_code == 503, (path, answer.text)
                    if accept == "text/html":
                        assert "Not available" in answer.text and refused in answer.text
                    else:
                        assert answer.json() == {"detail": refused}
        finally:
            await db.close(wait=1)
