"""Shared fixtures: real brokers (embedded amqtt and the machine's Mosquitto) and unique topics."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import hypothesis  # noqa: F401  (see below)
import pytest
import sqlalchemy as sa

from studio.bus import EmbeddedBroker
from studio.config import BrokerSettings
from studio.store import Database

# hypothesis's pytest plugin imports the package lazily at session end, deep in pytest's
# stack, where CPython 3.11.7's parser can fail with "AST constructor recursion depth
# mismatch" while pytest rewrites it. Importing it here, at the top, avoids that.

MOSQUITTO_URL = os.environ.get("STUDIO_TEST_MOSQUITTO", "mqtt://127.0.0.1:1883")
POSTGRES_URL = os.environ.get("STUDIO_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(params=["embedded", "mosquitto"])
async def broker(request: pytest.FixtureRequest) -> AsyncIterator[BrokerSettings]:
    """Broker settings for a real broker: each test runs against both kinds."""
    if request.param == "embedded":
        async with EmbeddedBroker() as embedded:
            yield BrokerSettings(url=embedded.url, client_id_prefix=f"t{uuid.uuid4().hex[:8]}")
        return
    settings = BrokerSettings(url=MOSQUITTO_URL, client_id_prefix=f"t{uuid.uuid4().hex[:8]}")
    if not _reachable(settings.host, settings.port):
        if os.environ.get("CI"):
            pytest.fail(f"Mosquitto is not reachable at {MOSQUITTO_URL} (CI must start it)")
        pytest.skip(f"Mosquitto is not reachable at {MOSQUITTO_URL}")
    yield settings


@pytest.fixture
def table_id() -> str:
    """A table id unique to this test, so topics never collide between tests or runs."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh real database: a SQLite file, or a private schema in the PostgreSQL ``test`` db."""
    if request.param == "sqlite":
        async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
            yield db
        return
    if not _reachable("127.0.0.1", 5432):
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432 (CI must start it)")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    db = Database(POSTGRES_URL, schema=schema)
    try:
        await db.create_all()
        yield db
    finally:
        async with db.engine.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await db.close()
