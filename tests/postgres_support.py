"""A PostgreSQL database of a test's own, for commands that take a database URL only.

The ``database`` fixture isolates a test in a schema of the shared ``test`` database, which
a command given ``--database URL`` cannot be pointed at: such a test gets a fresh,
empty database instead, dropped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from studio.errors import StoreError
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


class PostgresProxy:
    """A TCP proxy to PostgreSQL that a test cuts (the server gone: its connections reset,
    new ones refused) and restores, so that the controller meets a database away for real.

    ``lose_commit(delay)``: the next COMMIT's client is reset at once, and the COMMIT itself
    reaches the server ``delay`` seconds later (on its way on the network), so that the
    transaction commits but its answer is lost."""

    def __init__(self) -> None:
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._commit_delay: float | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._stall_at_commit: bool | None = None

    def lose_commit(self, delay: float = 0.0) -> None:
        self._commit_delay = delay

    def stall(self) -> None:
        """Stop forwarding, either way, without closing anything (a network partition, a
        server that stopped answering): bytes are held, connections kept, no reset; a new
        connection is accepted and held too. :meth:`resume` forwards what was held."""
        self._flowing.clear()

    def stall_at_commit(self, *, delivered: bool) -> None:
        """Stall from the next COMMIT on: the COMMIT reaches the server (``delivered``: the
        transaction commits, its answer is held) or is held with the rest."""
        self._stall_at_commit = delivered

    def resume(self) -> None:
        self._flowing.set()

    def url(self, url: str) -> str:
        return make_url(url).set(port=self.port).render_as_string(hide_password=False)

    async def start(self) -> None:
        target = make_url(POSTGRES_URL)
        host, port = target.host or "127.0.0.1", target.port or 5432

        async def pipe(
            reader: asyncio.StreamReader,
            writer: asyncio.StreamWriter,
            client: asyncio.StreamWriter | None = None,
        ) -> None:
            with contextlib.suppress(OSError):
                while data := await reader.read(65536):
                    if (
                        client is not None
                        and self._stall_at_commit is not None
                        and _is_commit(data)
                    ):
                        delivered, self._stall_at_commit = self._stall_at_commit, None
                        if delivered:
                            writer.write(data)
                            await writer.drain()
                            data = b""
                        self.stall()
                    await self._flowing.wait()
                    delay = self._commit_delay
                    if client is not None and delay is not None and _is_commit(data):
                        self._commit_delay = None
                        client.transport.abort()  # the client: reset, no answer
                        await asyncio.sleep(delay)
                        writer.write(data)  # the COMMIT, late
                        await writer.drain()
                        await asyncio.sleep(0.05)
                        break
                    writer.write(data)
                    await writer.drain()
            writer.close()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self._writers.append(writer)
            await self._flowing.wait()  # stalled: the server's answer never comes
            up_reader, up_writer = await asyncio.open_connection(host, port)
            self._writers += [writer, up_writer]
            await asyncio.gather(pipe(reader, up_writer, writer), pipe(up_reader, writer))

        self._server = await asyncio.start_server(handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        assert self._server is not None
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()
        self._flowing.set()  # what a stall held is lost with its connections
        self._server.close()
        await self._server.wait_closed()

    async def __aenter__(self) -> PostgresProxy:
        require_postgres()
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None and self._server.is_serving():
            await self.cut()


@asynccontextmanager
async def proxied_database(**options: Any) -> AsyncIterator[tuple[Database, PostgresProxy, str]]:
    """A fresh database read through a proxy that can stall or cut it (a :class:`Database`
    given ``options``), and the database's own URL; the stall lifted, the proxy's
    connections cut and the pool closed at the end."""
    async with fresh_database() as url, PostgresProxy() as proxy:
        db = Database(proxy.url(url), **options)
        try:
            yield db, proxy, url
        finally:
            proxy.resume()
            await proxy.cut()
            await db.close(wait=1)


@asynccontextmanager
async def stalling_database(
    **options: Any,
) -> AsyncIterator[tuple[Database, PostgresProxy, Database]]:
    """:func:`proxied_database`, its schema made, and a handle straight to it."""
    async with proxied_database(**options) as (db, proxy, url):
        direct = Database(url)
        try:
            await db.create_all()
            yield db, proxy, direct
        finally:
            await direct.close()


def _is_commit(data: bytes) -> bool:
    """A simple-query ("Q") COMMIT of the PostgreSQL wire protocol (asyncpg's)."""
    return data[:1] == b"Q" and b"COMMIT" in data.upper()


@contextmanager
def database_away(log: EventLog) -> Iterator[None]:
    """The log's appends and reads fail while the block runs, as with the database away."""
    real_append, real_read = log.append_batch, log.read

    async def away(*args: Any, **options: Any) -> Any:
        raise StoreError("the database is away")

    log.append_batch = log.read = away  # type: ignore[method-assign]
    try:
        yield
    finally:
        log.append_batch, log.read = real_append, real_read  # type: ignore[method-assign]
