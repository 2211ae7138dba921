"""``studio controller run`` whose PostgreSQL stops answering (a network partition: bytes
held, connections kept, no reset) stops, exit status 2, as when its lock is lost.

A crash review: the lock's check and the event log's appends had no time limit, so the
controller froze silently (nothing logged, no alert, its REST state hanging) until TCP
gave up, about 15 min; with ``?command_timeout=5`` the lost lock was logged 8 s in, but the
process exited only when the stall ended, its stop waiting on the hung append. Now the
write in flight says it waits at 2 s, the lock's check times out (three tries: the lock is
taken for lost) and the stop is bounded: its supervisor takes over.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx
import pytest
from http_support import wait_healthy
from postgres_support import PostgresProxy, fresh_database

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import Availability, Topics

STUDIO = Path(sys.executable).parent / "studio"


@pytest.mark.timeout(150)
async def test_the_controller_stops_once_its_database_stops_answering(
    broker: BrokerSettings,
    tmp_path: Path,
    table_id: str,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.params["broker"] != "embedded":
        pytest.skip("one broker is enough: the stall is the database's")
    async with fresh_database() as url, PostgresProxy() as proxy:
        port = free_port()
        config = tmp_path / "studio.toml"
        config.write_text(
            f'log_level = "INFO"\n[broker]\nurl = "{broker.url}"\n'
            f'client_id_prefix = "{broker.client_id_prefix}"\n'
            f'[database]\nurl = "{proxy.url(url)}"\n[web]\nport = {port}\n'
            f'[[tables]]\nid = "{table_id}"\n'
            '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'
        )
        process = await asyncio.create_subprocess_exec(
            str(STUDIO), "controller", "run", "--config", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=os.environ,
        )  # fmt: skip
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                await wait_healthy(client, process)
            proxy.stall()
            # An input arrives during the stall: its append hangs.
            async with MessageBus(broker, f"dev-{table_id}") as device:
                await device.wait_connected()
                topic = Topics(table_id).availability("shoe-1")
                await device.publish(topic, Availability(state="online").to_wire())  # type: ignore[arg-type]
            # Before: no line, no exit, until the stall (or TCP) ended.
            async with asyncio.timeout(90):
                _, err = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            proxy.resume()
        log = err.decode()
        assert process.returncode == 2, log[-3000:]
        assert (
            f"WARNING studio.store.eventlog: event log append (device.availability on {table_id}):"
            " no answer from the database after 2 s" in log
        ), log[-3000:]
        assert "the database lock's check got no answer in 3 s" in log
        assert (
            "ERROR studio.store.database: studio controller: the lock on database " in log
            and "was lost: its check got no answer in 3 tries of 3 s (the database stopped "
            "answering); stopping now"
            in log
        ), log[-3000:]
        assert "error: studio controller: the lock on database " in log
        assert "Traceback" not in log, log[-3000:]
