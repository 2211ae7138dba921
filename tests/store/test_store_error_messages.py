"""A database error reads as the database's own words, without SQLAlchemy's wrapping.

Found by an operator's walk-through: every database error ended in SQLAlchemy's
"(Background on this error at: https://sqlalche.me/e/21/dbapi)" and began with its
wrapper's class, ``(sqlalchemy.dialects.postgresql.asyncpg.Error)``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest
from postgres_support import POSTGRES_URL, PostgresProxy, fresh_database, require_postgres
from sqlalchemy import event
from sqlalchemy.engine import make_url

from studio.errors import StoreError
from studio.store import Database, EventLog


async def test_a_database_that_is_not_there_is_said_plainly() -> None:
    require_postgres()
    name = f"missing_{uuid.uuid4().hex[:8]}"
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    db = Database(url)
    try:
        with pytest.raises(StoreError) as info:
            await db.create_all()
    finally:
        await db.close()
    message = str(info.value)
    assert message.endswith(f': database "{name}" does not exist'), message
    assert "sqlalche.me" not in message and "(sqlalchemy" not in message


async def test_a_read_or_write_error_says_no_statement_parameters_or_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What a failed read or append says reaches a REST 503 and a console page: it said
    SQLAlchemy's text, the statement and its parameters (``[SQL: SELECT ... FROM event_log
    WHERE ... round_id = $2::VARCHAR]``, ``[parameters: (0, 'bj1-R1')]``), or a refused
    connection's ``Connect call failed ('127.0.0.1', 5432)``. Now a short reason; the whole
    error (its statement, not its parameters) is logged."""
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url))
        try:
            await db.create_all()
            log = EventLog(db)
            await log.append("t1", "in.test", {"n": 1}, round_id="t1-R1")
            armed = [True]

            def cut_mid_statement(*args: Any) -> None:
                if armed and "event_log" in args[2] and "round_id" in args[2]:
                    armed.clear()
                    proxy.stall()
                    loop = asyncio.get_running_loop()
                    loop.call_later(0.3, lambda: asyncio.ensure_future(proxy.cut()))

            event.listen(db.engine.sync_engine, "before_cursor_execute", cut_mid_statement)
            said = []
            for _failure in ("reset mid-statement", "refused"):
                with pytest.raises(StoreError) as failed:
                    async with asyncio.timeout(20):
                        await log.read(round_id="t1-R1")
                said.append(str(failed.value))
            with pytest.raises(StoreError) as refused_append:
                await log.append("t1", "in.test", {"n": 2})
            said.append(str(refused_append.value))
        finally:
            await db.close(wait=1)
    assert said == [
        "event log read failed: the database connection failed",
        "event log read failed: the database connection failed",
        "event log append failed: the database connection failed",
    ]
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        line.startswith("event log read failed: ") and "[SQL: SELECT" in line for line in logged
    ), logged
    assert any("Connect call failed" in line for line in logged), logged
    assert not any("[parameters" in line or "t1-R1" in line for line in logged), logged
