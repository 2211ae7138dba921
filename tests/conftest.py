"""Shared fixtures: real brokers (embedded amqtt and the machine's Mosquitto) and unique topics."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import hypothesis  # noqa: F401  (see below)
import pytest
import sqlalchemy as sa
from broker_support import MOSQUITTO_URL, clear_retained, reachable

from studio.bus import EmbeddedBroker
from studio.config import BrokerSettings
from studio.store import Database

# hypothesis's pytest plugin imports the package lazily at session end, deep in pytest's
# stack, where CPython 3.11.7's parser can fail with "AST constructor recursion depth
# mismatch" while pytest rewrites it. Importing it here, at the top, avoids that.

# The session locks (studio.bus.session_lock) of this run in a folder of its own, which its
# processes (pytest-xdist's workers too) inherit: in the machine's folder the lock files of
# every test's own client ids would pile up run after run.
_SESSION_LOCKS = tempfile.mkdtemp(prefix="studio-test-locks-")
os.environ.setdefault("LIVESTUDIO_LOCK_DIR", _SESSION_LOCKS)
atexit.register(shutil.rmtree, _SESSION_LOCKS, True)

# The camera tests' rendered frames, shared the same way by the run's processes
# (hwsim.camera.dataset.scenes): the same frames were rendered again and again (two
# profiles' scores of one cell, frame 33 of a seed after its first 33; 7 % of the camera
# tests' CPU). Per run, so never stale; up to ~2 GB while the camera tests run.
_SCENES = tempfile.mkdtemp(prefix="studio-test-scenes-")
os.environ.setdefault("HWSIM_SCENE_CACHE", _SCENES)
atexit.register(shutil.rmtree, _SCENES, True)

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(params=["embedded", "mosquitto"])
async def broker(request: pytest.FixtureRequest) -> AsyncIterator[BrokerSettings]:
    """Broker settings for a real broker: each test runs against both kinds."""
    if request.param == "embedded":
        async with EmbeddedBroker() as embedded:
            yield BrokerSettings(url=embedded.url, client_id_prefix=f"t{uuid.uuid4().hex[:8]}")
        return
    settings = BrokerSettings(url=MOSQUITTO_URL, client_id_prefix=f"t{uuid.uuid4().hex[:8]}")
    if not reachable(settings.host, settings.port):
        if os.environ.get("CI"):
            pytest.fail(f"Mosquitto is not reachable at {MOSQUITTO_URL} (CI must start it)")
        pytest.skip(f"Mosquitto is not reachable at {MOSQUITTO_URL}")
    yield settings


@pytest.fixture
def table_id(request: pytest.FixtureRequest) -> str:
    """A table id unique to this test, so topics never collide between tests or runs.

    On the machine's Mosquitto its retained messages are cleared after the test: they
    would outlive it, and a controller subscribing with wildcards is handed every one.
    Past Mosquitto's queue of 1,000 messages per client (``max_queued_messages``) the
    live messages that follow were dropped, and tests waiting for them timed out.
    """
    table = f"t-{uuid.uuid4().hex[:12]}"
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("broker") == "mosquitto":
        request.addfinalizer(lambda: clear_retained(MOSQUITTO_URL, table))
    return table


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh real database: a SQLite file, or a private schema in the PostgreSQL ``test`` db."""
    if request.param == "sqlite":
        async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
            yield db
        return
    if not reachable("127.0.0.1", 5432):
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            # First in, last out: the dump also covers the other fixtures' teardown.
            item.fixturenames.insert(0, "_tasks_dumped_before_timeout")


@pytest.fixture
async def _tasks_dumped_before_timeout(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Print where every asyncio task waits shortly before pytest-timeout stops the test.

    pytest-timeout shows the threads' stacks, and an async test that hangs shows only the
    event loop idle in its poll; the tasks' own stacks say what they wait for.
    """
    marker = request.node.get_closest_marker("timeout")
    limit = (
        float(marker.args[0])
        if marker and marker.args
        else float(request.config.getini("timeout") or 0)
    )
    if limit <= 0:
        yield
        return

    async def dump() -> None:
        await asyncio.sleep(max(1.0, limit - max(5.0, 0.05 * limit)))
        out = sys.stderr
        print(f"\n{request.node.nodeid}: close to its {limit:.0f} s timeout; tasks:", file=out)
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                print(f"--- {task.get_name()}", file=out)
                task.print_stack(file=out)

    watchdog = asyncio.create_task(dump(), name="timeout-watchdog")
    yield
    watchdog.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watchdog
