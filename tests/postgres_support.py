"""A PostgreSQL database of a test's own, for commands that take a database URL only.

The ``database`` fixture isolates a test in a schema of the shared ``test`` database, which
a command given ``--database URL`` cannot be pointed at: such a test gets a fresh,
empty database instead, dropped afterwards.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from studio.store import Database, EventLog

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def require_postgres() -> None:
    url = make_url(POSTGRES_URL)
    try:
        with socket.create_connection((url.host or "127.0.0.1", url.port or 5432), timeout=1):
            return
    except OSError:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is not reachable at {url.host}:{url.port} (CI must start it)")
        pytest.skip(f"PostgreSQL is not reachable at {url.host}:{url.port}")


@asynccontextmanager
async def fresh_database() -> AsyncIterator[str]:
    """The URL (``postgresql://...``) of a new database without any table."""
    require_postgres()
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(
        make_url(POSTGRES_URL).set(drivername="postgresql+asyncpg"),
        isolation_level="AUTOCOMMIT",
    )
    try:
        async with admin.connect() as conn:
            await conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        try:
            yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            async with admin.connect() as conn:
                await conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()


async def table_names(url: str) -> set[str]:
    """The tables of the database at ``url`` (its public schema)."""
    engine = create_async_engine(make_url(url).set(drivername="postgresql+asyncpg"))
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


@asynccontextmanager
async def backend_log(backend: str, tmp_path: Path) -> AsyncIterator[EventLog]:
    """An event log on a new database: SQLite in ``tmp_path``, or PostgreSQL ("postgres")."""
    if backend == "sqlite":
        async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
            yield EventLog(db)
        return
    async with fresh_database() as url, Database(url) as db:
        yield EventLog(db)
