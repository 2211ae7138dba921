"""A controller that cannot listen on its web port stops before it touches anything.

Found by an operator's walk-through: the web port was bound last, so with ``web.port``
taken (or ``web.host`` wrong) the controller had already connected to the broker, logged
a ``controller.started`` record and published its tables' retained state and prompts
before it said ``error: cannot listen on ...`` (with an aiomqtt traceback). Each restart
of the documented systemd unit did it again: three failed starts left three starts in the
event log, and one given another database republished a live table's state. Now it binds
the port first of all: status 2, one clear line, nothing written or published.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from http_support import controller_config, start_controller
from retained_support import retained

from studio.config import BrokerSettings
from studio.contract import Topics
from studio.store import Database, EventLog


async def _starts(url: str) -> int:
    async with Database(url) as db:
        return len([r async for r in EventLog(db).iterate(kinds=["controller.started"])])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_taken_web_port_stops_the_controller_before_it_touches_anything(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = controller_config(tmp_path, broker, table_id, port)
        for _ in range(2):  # as a supervisor restarting it would
            process = await start_controller(config)
            async with asyncio.timeout(60):
                _, err = await process.communicate()
            log = err.decode()
            assert process.returncode == 2, log[-2000:]
            assert log.strip().splitlines()[-1] == (
                f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
            )
            assert "Traceback" not in log
            assert "connected to" not in log  # the broker: never reached
    assert await _starts(f"sqlite:///{tmp_path}/studio.db") == 0
    assert await retained(broker, Topics(table_id).base) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_web_host_it_cannot_listen_on_stops_the_controller_alike(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails.
    config = controller_config(tmp_path, broker, table_id, 18000, extra='host = "192.0.2.1"\n')
    process = await start_controller(config)
    async with asyncio.timeout(60):
        _, err = await process.communicate()
    log = err.decode()
    assert process.returncode == 2, log[-2000:]
    assert log.strip().splitlines()[-1].startswith("error: cannot listen on 192.0.2.1:18000: ")
    assert "Traceback" not in log and "connected to" not in log
    assert await _starts(f"sqlite:///{tmp_path}/studio.db") == 0
    assert await retained(broker, Topics(table_id).base) == []
