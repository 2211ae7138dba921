"""A REST read whose database stops answering (a network partition, a server blocked: bytes
held, the connection kept, no reset) answers 503 within its time limit, with the default
one (``Database.read_timeout``, 15 s), against the real controller service; the chains'
walk that the console's audit page and ``/api/audit/chain`` share, in a task of its own,
is bounded as its readers are.

Until 2026-12-07 it waited until the controller stopped (its lock's watch: about 23 s in,
then the connection reset) or, the lock's checks still answered (a table an admin locked),
until the database answered again.

PostgreSQL through a TCP proxy that stops forwarding (``PostgresProxy.stall``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from postgres_support import proxied_database
from sqlalchemy import event

import studio.console  # registers the users/sessions tables before create_all
from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog, RoundIndex
from studio.store.database import ReadTimedOut
from studio.streams import Fanout
from studio.web import WebContext, create_app
from studio.web.audit import SharedChainCheck

assert studio.console.install is not None

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOUND = 15  # the default (Database.read_timeout)
CLOSING = 2.5  # closing the connection that stopped answering (asyncpg waits up to 2 s)


@asynccontextmanager
async def _served(db: Database) -> AsyncIterator[WebContext]:
    """The schema and one round in ``db``, the controller service over it, and the web
    context the REST reads go through."""
    await db.create_all()
    await RoundIndex(db).upsert("bj1-R1", "bj1", started="2026-12-07T10:00:00+00:00")
    log, fanout = EventLog(db), Fanout(bus=None)
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse")])
    async with ControllerService(config, None, log, fanout, timers=False) as controller:
        yield WebContext(
            fanout=fanout,
            log=log,
            db=db,
            controller=controller,
            extras={"platform_token": TOKEN},
        )


@asynccontextmanager
async def _client(ctx: WebContext, **transport: Any) -> AsyncIterator[httpx.AsyncClient]:
    app = httpx.ASGITransport(app=create_app(ctx), **transport)
    async with httpx.AsyncClient(transport=app, base_url="http://testserver") as http:
        yield http


@pytest.mark.timeout(90)
async def test_a_rest_read_whose_database_stops_answering_is_a_503() -> None:
    async with (
        proxied_database() as (db, proxy, _),  # the bounds the controller runs with
        _served(db) as ctx,
        _client(ctx) as http,
    ):
        assert (await http.get("/api/rounds", headers=AUTH)).status_code == 200
        proxy.stall()
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with asyncio.timeout(BOUND + 10):  # was: until the stall ended
            answer = await http.get("/api/rounds", headers=AUTH)
        took = loop.time() - started
        assert answer.status_code == 503, answer.text
        assert answer.json() == {
            "detail": f"database read failed: the database gave no answer in {BOUND} s"
        }
        assert BOUND <= took < BOUND + CLOSING, took
        proxy.resume()
        # Its connection was closed, not given back to the pool: the next read
        # (on a connection of its own) answers.
        again = await http.get("/api/rounds", headers=AUTH)
        assert again.status_code == 200
        assert [r["round_id"] for r in again.json()] == ["bj1-R1"]


@pytest.mark.timeout(60)
async def test_the_shared_chain_walk_whose_database_stops_answering_is_cut_short() -> None:
    async with proxied_database(read_timeout=3) as (db, proxy, _):
        await db.create_all()
        log = EventLog(db)
        await log.append("bj1", "in.test", {"n": 1})
        proxy.stall()
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ReadTimedOut):
            async with asyncio.timeout(30):  # was: until the stall ended
                await SharedChainCheck(log).check()
        assert loop.time() - started < 3 + CLOSING
        proxy.resume()
        done = await SharedChainCheck(log).check()
        assert done.events.ok and done.events.records == 1


@pytest.mark.timeout(60)
async def test_a_rest_read_whose_connection_is_reset_says_no_statement() -> None:
    """A reset in the middle of a round record's event log read: the 503 carried
    SQLAlchemy's text, the statement and its parameters (``[SQL: SELECT event_log.id, ...
    WHERE event_log.id > $1::BIGINT AND event_log.round_id = $2::VARCHAR ...]``,
    ``[parameters: (0, 'bj1-R1')]``). Now a short reason; the whole error is logged."""
    async with proxied_database() as (db, proxy, _), _served(db) as ctx:
        armed: list[bool] = []

        def reset_mid_statement(*args: Any) -> None:
            if armed and "event_log" in args[2] and "round_id" in args[2]:
                armed.clear()
                proxy.stall()
                loop = asyncio.get_running_loop()
                loop.call_later(0.3, lambda: asyncio.ensure_future(proxy.cut()))

        event.listen(db.engine.sync_engine, "before_cursor_execute", reset_mid_statement)
        async with _client(ctx) as http:
            armed.append(True)
            async with asyncio.timeout(20):
                answer = await http.get("/api/rounds/bj1-R1", headers=AUTH)
    assert answer.status_code == 503, answer.text
    assert answer.json() == {"detail": "database read failed: the database connection failed"}


@pytest.mark.timeout(90)
async def test_a_rest_read_whose_database_refuses_connections_is_a_503() -> None:
    """The server gone (its connections reset, new ones refused): each REST read answered
    500 Internal Server Error, where a stall answers a 503 that says why."""
    async with (
        proxied_database(read_timeout=3) as (db, proxy, _),
        _served(db) as ctx,
        _client(ctx, raise_app_exceptions=False) as http,
    ):
        assert (await http.get("/api/rounds", headers=AUTH)).status_code == 200
        await proxy.cut()
        answers = {}
        for path in ("/api/rounds", "/api/rounds/bj1-R1", "/api/stats"):
            async with asyncio.timeout(20):
                answer = await http.get(path, headers=AUTH)
            answers[path] = (answer.status_code, answer.text)
        async with asyncio.timeout(20):
            chain = await http.get("/api/audit/chain", headers=AUTH)
    said = '{"detail":"database read failed: the database connection failed"}'
    assert answers == {path: (503, said) for path in answers}
    assert (chain.status_code, chain.text) == (503, said)
