"""The ``rig`` fixture: a simulated table on real ptys, the real drivers, a real broker,
and a recorder of everything the drivers publish for that table."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from devices_rig import HEARTBEAT, TIMEOUT, Rig, start_recorder

from drivers.runner import DriverSet
from hwsim.table import Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Topics


@pytest.fixture
async def rig(broker: BrokerSettings, table_id: str, tmp_path: Path) -> AsyncIterator[Rig]:
    topics = Topics(table_id)
    async with Simulator(
        [table_id], seed=11, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT)
        async with MessageBus(broker, "recorder") as consumer, asyncio.TaskGroup() as group:
            rec = await start_recorder(consumer, topics, group)
            async with DriverSet(config, broker=broker) as drivers:
                await drivers.wait_online(20)
                yield Rig(sim.table(table_id), sim, drivers, rec, topics, consumer, broker)
            rec.stop()
