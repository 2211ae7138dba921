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
from typing import Any
from urllib.parse import unquote_plus

import httpx
import pytest
import sqlalchemy as sa
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, login
from postgres_support import PostgresProxy, fresh_database
from sqlalchemy import event

from studio.console import UserStore
from studio.console.auth import sessions_table
from studio.console.users import users_table
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


@pytest.mark.timeout(60)
async def test_a_console_form_whose_session_read_gets_no_answer_gets_the_page(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """A browser's form (POST) during a stall: the CSRF check reads the session before any
    route, and its 503 was bare JSON, not the *Not available* page a page's read gets. A
    script asking for JSON keeps JSON."""
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url), read_timeout=READ_TIMEOUT)
        try:
            await db.create_all()
            await UserStore(db, hasher=fast_hasher()).add("admin", PASSWORD, "admin", by="t")
            app = create_app(context(db, fanout, controller))
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                token = await login(http, "admin")
                proxy.stall()
                answers = []
                for accept in ("text/html", "application/json"):
                    async with asyncio.timeout(30):
                        answers.append(
                            await http.post(
                                "/console/users/admin/role",
                                data={"role": "admin", "csrf_token": token},
                                headers={"accept": accept},
                            )
                        )
        finally:
            proxy.resume()
            await proxy.cut()
            await db.close(wait=1)
    page, script = answers
    assert page.status_code == 503, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "Not available" in page.text and SAID in page.text
    assert (script.status_code, script.json()) == (503, {"detail": SAID})


@pytest.mark.timeout(60)
async def test_a_password_set_whose_database_stops_answering_after_its_commit_is_made(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """The change committed, then the database stopped answering: the read of the account
    after the commit got no answer, the admin was told the change failed, and the user's
    other sessions (the stolen cookie the new password is to shut out) were never ended.
    Now the account is read, and the sessions end, in the change's own transaction."""
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url), read_timeout=READ_TIMEOUT)
        direct = Database(url)
        try:
            await db.create_all()
            users = UserStore(db, hasher=fast_hasher())
            await users.add("admin", PASSWORD, "admin", by="t")
            await users.add("ann", PASSWORD, "viewer", by="t")
            app = create_app(context(db, fanout, controller))
            transport = httpx.ASGITransport(app=app)
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://testserver") as admin,
                httpx.AsyncClient(transport=transport, base_url="http://testserver") as ann,
            ):
                token = await login(admin, "admin")
                await login(ann, "ann")
                committed: list[bool] = []

                def commit(_conn: Any) -> None:
                    committed.append(True)

                def checked_in(*_args: Any) -> None:
                    if committed:  # the change's connection given back: it committed
                        proxy.stall()

                event.listen(db.engine.sync_engine, "commit", commit)
                event.listen(db.engine.sync_engine.pool, "checkin", checked_in)
                async with asyncio.timeout(30):
                    answer = await admin.post(
                        "/console/users/ann/password",
                        data={"password": "a new one, long enough", "csrf_token": token},
                        headers={"accept": "text/html"},
                    )
                assert committed
            proxy.resume()
            async with direct.engine.connect() as conn:
                sessions = (
                    await conn.execute(
                        sa.select(users_table.c.username)
                        .select_from(sessions_table.join(users_table))
                        .order_by(users_table.c.username)
                    )
                ).all()
        finally:
            proxy.resume()
            await proxy.cut()
            await db.close(wait=1)
            await direct.close()
    assert answer.status_code == 303, answer.text
    location = unquote_plus(answer.headers["location"])
    assert "password of ann changed" in location, location
    assert [row.username for row in sessions] == ["admin"]  # ann's ended, the admin's kept
