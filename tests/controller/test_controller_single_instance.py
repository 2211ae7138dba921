"""A second ``studio controller run`` on the same database (or broker) refuses to start.

Found by an operator's walk-through: the second process replayed the event log, wrote its
own ``controller.started`` records into it and took over the running controller's broker
session, then failed on the web port (or hung). Every later start then replayed those
records as restarts, raising device alerts nobody saw live. Now it stops, with status 2,
before it writes or connects anything. The real processes, on a real broker and database.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from http_support import controller_config, start_controller, wait_healthy

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.store import Database, EventLog


async def _count_starts(url: str) -> int:
    async with Database(url) as db:
        return len([r async for r in EventLog(db).iterate(kinds=["controller.started"])])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_second_controller_on_the_database_is_refused(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    port = free_port()
    url = f"sqlite:///{tmp_path}/studio.db"
    config = controller_config(tmp_path, broker, table_id, port)
    first = await start_controller(config)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await wait_healthy(client, first)
        second = await start_controller(config)
        async with asyncio.timeout(60):
            _, err = await second.communicate()
        assert second.returncode == 2, err.decode()[-2000:]
        message = err.decode().strip().splitlines()[-1]
        # Refused by its broker session's lock, taken first (before the database is opened);
        # the database's lock refuses one on another broker (tests/store).
        assert message.startswith("error: another studio controller on this machine"), message
        assert f"held by pid {first.pid})" in message and "stop it first" in message
        assert "controller stopped" not in err.decode()  # it never started
        assert first.returncode is None  # the first runs on
        first.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            _, err = await first.communicate()
        assert first.returncode == 0, err.decode()[-2000:]
        # Before: 2 (the second process's start, replayed later as a restart).
        assert await _count_starts(url) == 1
    finally:
        if first.returncode is None:
            first.kill()
            await first.wait()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_second_controller_on_another_database_and_the_same_broker_is_refused(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    # Second walk-through: a controller started from another folder opened its own
    # var/studio.db, so the database lock let it in; it took the running controller's broker
    # session in turn (each dropped 6-7 times in 15 s) and overwrote the table's retained
    # prompt with its own.
    port = free_port()
    first = await start_controller(controller_config(tmp_path / "here", broker, table_id, port))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await wait_healthy(client, first)
        there = controller_config(tmp_path / "there", broker, table_id, free_port())
        second = await start_controller(there)
        async with asyncio.timeout(60):
            _, err = await second.communicate()
        assert second.returncode == 2, err.decode()[-2000:]
        message = err.decode().strip().splitlines()[-1]
        assert message.startswith(
            "error: another studio controller on this machine uses client id "
            f"{broker.client_id_prefix}-controller on broker {broker.host}:{broker.port} (lock "
        ), message
        assert f"held by pid {first.pid})" in message and message.endswith("stop it first")
        assert first.returncode is None  # the first runs on
        # The second wrote nothing: it stopped before it opened (and so created) its database.
        assert not (tmp_path / "there" / "studio.db").exists()
    finally:
        first.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            await first.communicate()
