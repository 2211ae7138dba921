"""``studio controller run`` refuses a database ``studio demo`` made (a review).

A demo's database (marked with a ``studio_demo`` table, ``studio.store.demo_mark``) holds
simulated rounds in its event log and a ``manager`` account whose password the demo printed
in its banner. Before, only the demo looked at its mark: a controller whose configuration
named such a database started on it without a word. Now it stops, exit status 2, before
it takes the database's lock (a demo started on it afterwards still finds it its own).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from http_support import controller_config, start_controller

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.demo.database import LOCK, claim_demo_database
from studio.store import Database


@pytest.mark.timeout(60)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_the_controller_refuses_a_demos_database(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    async with Database(url) as db, db.exclusive(LOCK):  # as `studio demo --database` leaves it
        await claim_demo_database(db, allow=False)
    process = await start_controller(controller_config(tmp_path, broker, table_id, free_port()))
    try:
        async with asyncio.timeout(20):
            _, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 2, err.decode()[-2000:]
    message = err.decode().strip().splitlines()[-1]
    assert message.startswith(f"error: database {url} is a demo's"), message
    assert "simulated rounds" in message and "manager" in message, message
    assert "controller stopped" not in err.decode()  # it never started
    # No start of the lock counted: the next demo on it is not told another process used it.
    async with Database(url) as db, db.exclusive(LOCK):
        await claim_demo_database(db, allow=False)
