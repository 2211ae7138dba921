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
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote_plus

import httpx
import pytest
import sqlalchemy as sa
import websockets
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, login
from postgres_support import PostgresProxy, fresh_database, proxied_database
from sqlalchemy import event

from studio.console import UserStore
from studio.console.auth import sessions_table
from studio.console.pages import EXPORT_BATCH
from studio.console.users import iso, users_table
from studio.store import Database, RoundIndex
from studio.streams import Fanout
from studio.web import WebServer, create_app

READ_TIMEOUT = 3.0
CLOSING = 2.5  # closing the connection that stopped answering (asyncpg waits up to 2 s)
SAID = f"database read failed: the database gave no answer in {READ_TIMEOUT:g} s"


@asynccontextmanager
async def _proxied_database() -> AsyncIterator[tuple[Database, PostgresProxy]]:
    """A fresh database, its schema made, read through a proxy that can stall or cut; the
    stall lifted, the proxy's connections cut and the pool closed at the end."""
    async with proxied_database(read_timeout=READ_TIMEOUT) as (db, proxy, _):
        await db.create_all()
        yield db, proxy


@asynccontextmanager
async def _signed_in(
    db: Database, fanout: Fanout, controller: InMemoryController, role: str, **transport: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A client of the app, logged in as a new user named after its ``role``; with the
    session's CSRF token."""
    await UserStore(db, hasher=fast_hasher()).add(role, PASSWORD, role, by="t")
    app = httpx.ASGITransport(app=create_app(context(db, fanout, controller)), **transport)
    async with httpx.AsyncClient(transport=app, base_url="http://testserver") as http:
        yield http, await login(http, role)


@pytest.mark.timeout(60)
async def test_a_console_page_whose_database_stops_answering_says_so(
    fanout: Fanout, controller: InMemoryController
) -> None:
    async with (
        _proxied_database() as (db, proxy),
        _signed_in(db, fanout, controller, "viewer") as (http, _),
    ):
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


@pytest.mark.timeout(60)
async def test_a_console_page_whose_database_refuses_connections_says_so(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """The server gone (connections reset, new ones refused): a console page, a REST read
    with a console session and the audit page answered 500 Internal Server Error."""
    refused = "database read failed: the database connection failed"
    async with (
        _proxied_database() as (db, proxy),
        _signed_in(db, fanout, controller, "viewer", raise_app_exceptions=False) as (http, _),
    ):
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


@pytest.mark.timeout(60)
async def test_a_console_form_whose_session_read_gets_no_answer_gets_the_page(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """A browser's form (POST) during a stall: the CSRF check reads the session before any
    route, and its 503 was bare JSON, not the *Not available* page a page's read gets. A
    script asking for JSON keeps JSON."""
    async with (
        _proxied_database() as (db, proxy),
        _signed_in(db, fanout, controller, "admin") as (http, token),
    ):
        proxy.stall()
        answers = []
        for accept in ("text/html", "application/json"):
            async with asyncio.timeout(30):
                answers.append(
                    await http.post(
                        "/console/users/admin/role",
                        data={"role": "admin", "reason": "a test of it", "csrf_token": token},
                        headers={"accept": accept},
                    )
                )
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
                        data={
                            "password": "a new one, long enough",
                            "reason": "a test of it",
                            "csrf_token": token,
                        },
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


@pytest.mark.timeout(60)
async def test_a_rounds_export_whose_database_stops_answering_later_is_cut_short(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """The export's batches after the first are read as its body is sent, from a task of
    the response's own (Starlette's, for an ASGI server of spec_version < 2.4: uvicorn's,
    httpx's): the request's bound did not cover them, and a stall held the download until
    the database answered. Now each batch is bounded; the download breaks off."""
    async with _proxied_database() as (db, proxy):
        index = RoundIndex(db)
        for i in range(EXPORT_BATCH + 100):
            started = f"2026-12-07T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}+00:00"
            await index.upsert(f"bj1-R{i:04d}", "bj1", started=started)
        asked = 0

        async def rounds(**filters: Any) -> list[dict[str, Any]]:
            nonlocal asked
            asked += 1
            if asked == 2:  # the second batch: after the answer started
                proxy.stall()
            return await index.search(**filters)

        controller.rounds = rounds  # type: ignore[method-assign]
        signed_in = _signed_in(db, fanout, controller, "manager", raise_app_exceptions=False)
        async with signed_in as (http, _):
            loop = asyncio.get_running_loop()
            started_at = loop.time()
            body = b""
            # httpx's in-process transport ends the body where the app failed (a real
            # server breaks the chunked answer off, which a browser reports as failed).
            with contextlib.suppress(httpx.HTTPError):
                async with asyncio.timeout(READ_TIMEOUT + CLOSING + 5):  # was: the stall's end
                    async with http.stream("GET", "/console/rounds/export.csv") as answer:
                        assert answer.status_code == 200
                        async for chunk in answer.aiter_bytes():
                            body += chunk
            took = loop.time() - started_at
    assert asked == 2 and took < READ_TIMEOUT + CLOSING, took
    assert body.count(b"\n") == 1 + EXPORT_BATCH  # the header and the first batch alone


@pytest.mark.timeout(60)
async def test_a_console_page_whose_session_touch_waits_on_a_lock_says_so(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """The session's ``last_seen`` is written at most every 30 s, in the request: with its
    row locked (another transaction's ``FOR UPDATE``; a database blocked on its disk alike)
    the page waited as long as the lock was held, its reads answered. Now that write is
    bounded as a read."""
    async with fresh_database() as url:
        db = Database(url, read_timeout=READ_TIMEOUT)
        other = Database(url)
        try:
            await db.create_all()
            async with _signed_in(db, fanout, controller, "viewer") as (http, _):
                long_ago = iso(datetime.now(UTC) - timedelta(seconds=60))  # a touch is due
                async with other.engine.begin() as conn:
                    await conn.execute(sessions_table.update().values(last_seen=long_ago))
                async with other.engine.connect() as holder:
                    await holder.execute(sa.select(sessions_table).with_for_update())
                    loop = asyncio.get_running_loop()
                    started = loop.time()
                    async with asyncio.timeout(20):  # was: as long as the lock was held
                        answer = await http.get("/console/rounds", headers={"accept": "text/html"})
                    took = loop.time() - started
                    await holder.rollback()
        finally:
            await db.close(wait=1)
            await other.close()
    assert answer.status_code == 503, answer.text
    said = f"database write failed: the database gave no answer in {READ_TIMEOUT:g} s"
    assert "Not available" in answer.text and said in answer.text
    assert READ_TIMEOUT <= took < READ_TIMEOUT + CLOSING, took


@pytest.mark.timeout(60)
async def test_a_socket_opened_while_the_database_stops_answering_is_refused_in_time(
    fanout: Fanout, controller: InMemoryController
) -> None:
    """A WebSocket's handshake reads its session in its own task, which the app's bound
    left alone: a socket opened during a stall waited until the database answered. Now
    the console's socket is closed with 1013 (try again later: console.js reconnects) and
    a table's socket refused with a 503, within the reads' limit."""
    async with _proxied_database() as (db, proxy):
        await UserStore(db, hasher=fast_hasher()).add("viewer", PASSWORD, "viewer", by="t")
        app = create_app(context(db, fanout, controller))
        async with WebServer(app, port=0) as server:
            async with httpx.AsyncClient(base_url=server.url) as http:
                await login(http, "viewer")
                cookie = {"Cookie": f"studio_session={http.cookies['studio_session']}"}
            base = f"ws://127.0.0.1:{server.port}"
            proxy.stall()
            loop = asyncio.get_running_loop()
            started = loop.time()
            async with websockets.connect(
                f"{base}/console/ws", additional_headers=cookie, open_timeout=20
            ) as ws:
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 20)
            console_took = loop.time() - started
            started = loop.time()
            with pytest.raises(websockets.InvalidStatus) as refused:
                async with websockets.connect(
                    f"{base}/ws/tables/bj1", additional_headers=cookie, open_timeout=20
                ):
                    pass
            table_took = loop.time() - started
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    assert refused.value.response.status_code == 503
    assert SAID.encode() in refused.value.response.body
    assert READ_TIMEOUT <= console_took < READ_TIMEOUT + CLOSING, console_took
    assert READ_TIMEOUT <= table_took < READ_TIMEOUT + CLOSING, table_took
