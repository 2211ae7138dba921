"""One process, many devices: every shoe, shuffler and cut-card sensor of the config.

For the CLI (``studio drivers run --config FILE``) and for in-process use::

    async with DriverSet(config) as drivers:      # drivers run in this event loop
        await drivers.wait_online()
        drivers.get("t1", "shoe-1").stats
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from drivers.cutcard import CutCardDriver
from drivers.device import DeviceDriver
from drivers.shoe import ShoeDriver
from drivers.shuffler import ShufflerDriver
from studio.config.models import BrokerSettings, StudioConfig
from studio.errors import ConfigError

_LOGGER = logging.getLogger(__name__)

DRIVERS: dict[str, type[DeviceDriver]] = {
    "shoe": ShoeDriver,
    "shuffler": ShufflerDriver,
    "cutcard": CutCardDriver,
}


def build_drivers(
    config: StudioConfig,
    *,
    broker: BrokerSettings | None = None,
    tables: Iterable[str] | None = None,
    **options: Any,
) -> list[DeviceDriver]:
    """A driver for every serial device (cameras are not ours) of the selected tables."""
    broker = broker or config.broker
    drivers: list[DeviceDriver] = []
    for table_id, device in config.devices(tables):
        if device.kind not in DRIVERS:
            continue
        if not device.port:
            raise ConfigError(f"tables[{table_id}].devices[{device.id}]: no port configured")
        drivers.append(DRIVERS[device.kind](table_id, device, broker, **options))
    return drivers


async def run_drivers(drivers: list[DeviceDriver]) -> None:
    """Run until cancelled; a bug in one driver stops them all (loudly), a dead port never does."""
    async with asyncio.TaskGroup() as group:
        for driver in drivers:
            group.create_task(driver.run(), name=f"driver:{driver.table_id}/{driver.device_id}")


class DriverSet:
    def __init__(
        self, config: StudioConfig, *, broker: BrokerSettings | None = None, **options: Any
    ) -> None:
        self.drivers = build_drivers(config, broker=broker, **options)
        self._task: asyncio.Task[None] | None = None

    def get(self, table_id: str, device_id: str) -> DeviceDriver:
        for driver in self.drivers:
            if driver.table_id == table_id and device_id in (driver.device_id, driver.kind):
                return driver
        raise KeyError(f"{table_id}/{device_id}")

    def published(self) -> list[tuple[str, str, int]]:
        """(table, device, seq of the last event handed to the bus) of every driver."""
        return [(d.table_id, d.device_id, d.published_seq) for d in self.drivers]

    async def wait_online(self, within: float = 30.0) -> None:
        """Wait until every device is online and every bus connected (TimeoutError after ``within`` s)."""
        async with asyncio.timeout(within):
            while not all(d.online and d.bus.connected for d in self.drivers):
                if self._task is not None and self._task.done():
                    self._task.result()
                await asyncio.sleep(0.02)

    async def __aenter__(self) -> DriverSet:
        self._task = asyncio.create_task(run_drivers(self.drivers), name="drivers")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
