"""The camera's health reports as a consumer on the bus sees them (shared by camera tests)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DeviceHealth, Topics


@contextlib.asynccontextmanager
async def health_reports(
    broker: BrokerSettings, table_id: str, device: str = "cam-1"
) -> AsyncIterator[list[DeviceHealth]]:
    """Every health report ``device`` publishes while the block runs, in order."""
    topic = Topics(table_id).health(device)
    reports: list[DeviceHealth] = []
    async with MessageBus(broker, f"watch-{table_id}") as bus:
        async with bus.subscribe(topic, DeviceHealth, accept=topic.__eq__) as subscription:
            await bus.wait_connected()

            async def watch() -> None:
                async for received in subscription:
                    reports.append(received.payload)

            async with asyncio.TaskGroup() as group:
                watcher = group.create_task(watch(), name="health-watch")
                try:
                    yield reports
                finally:
                    watcher.cancel()
