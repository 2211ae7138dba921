"""``studio controller run`` stops, exit status 2, once its database lock is lost.

A review: PostgreSQL dropped the controller's lock connection (a server restart, a network
cut, ``idle_session_timeout``: here ``pg_terminate_backend``), a second controller started
on the same database and refunded the first one's live rounds, which the first then
settled. The controller now checks its lock every second and stops with an ERROR; its
supervisor starts it again, and the new one is the only one, or is refused.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from http_support import wait_healthy
from postgres_support import fresh_database

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.store import Database

STUDIO = Path(sys.executable).parent / "studio"


async def _lose(url: str, tmp_path: Path) -> None:
    """Take the controller's lock away as the database (or an admin) can."""
    if url.startswith("sqlite"):
        (tmp_path / "studio.db.studio-controller.lock").unlink()
        return
    async with Database(url) as db, db.engine.connect() as conn:
        # The session lock's holder sits idle; an append's writers' lock is held in a
        # transaction.
        query = (
            "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a "
            "USING (pid) WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle' "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        assert (await conn.execute(sa.text(query))).all() == [(True,)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_the_controller_stops_once_its_lock_is_lost(
    broker: BrokerSettings,
    tmp_path: Path,
    table_id: str,
    backend: str,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.params["broker"] != "embedded":
        pytest.skip("one broker is enough: the lock is the database's")
    async with _database(backend, tmp_path) as url:
        port = free_port()
        config = tmp_path / "studio.toml"
        config.write_text(
            f'log_level = "INFO"\n[broker]\nurl = "{broker.url}"\n'
            f'client_id_prefix = "{broker.client_id_prefix}"\n'
            f'[database]\nurl = "{url}"\n[web]\nport = {port}\n[[tables]]\nid = "{table_id}"\n'
        )
        process = await asyncio.create_subprocess_exec(
            str(STUDIO), "controller", "run", "--config", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=os.environ,
        )  # fmt: skip
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                await wait_healthy(client, process)
            await _lose(url, tmp_path)
            async with asyncio.timeout(30):
                _, err = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        log = err.decode()
        assert process.returncode == 2, log[-3000:]
        assert "error: studio controller: the lock on database " in log
        assert "ERROR studio.store.database: studio controller: the lock" in log
        assert "Traceback" not in log, log[-3000:]


@asynccontextmanager
async def _database(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    if backend == "postgres":
        async with fresh_database() as url:
            yield url
        return
    yield f"sqlite:///{tmp_path}/studio.db"
