"""One process, many devices: every shoe, shuffler and cut-card sensor of the config.

For the CLI (``studio drivers run --config FILE``) and for in-process use::

    async with DriverSet(config) as drivers:      # drivers run in this event loop
        await drivers.wait_online()
        drivers.get("t1", "shoe-1").stats

With a ``state_dir`` (the CLI always has one), each device's run lock
(:mod:`drivers.run_lock`) is taken before any driver starts and held until they all
stop: a device another process already serves refuses the whole set
(:class:`~drivers.run_lock.DeviceBusyError`), before anything connects to the broker.
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
from drivers.run_lock import run_locks
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
    """Run until cancelled; a bug in one driver stops them all (loudly), a dead port never does.

    Raises :class:`~drivers.run_lock.DeviceBusyError` first if another process runs any
    of the devices (see the module docstring)."""
    with run_locks(d.run_lock for d in drivers):
        await _serve(drivers)


async def _serve(drivers: list[DeviceDriver]) -> None:
    async with asyncio.TaskGroup() as group:
        for driver in drivers:
            group.create_task(driver.run(), name=f"driver:{driver.table_id}/{driver.device_id}")


class DriverSet:
    def __init__(
        self, config: StudioConfig, *, broker: BrokerSettings | None = None, **options: Any
    ) -> None:
        self.drivers = build_drivers(config, broker=broker, **options)
        self._task: asyncio.Task[None] | None = None
        self._locks = contextlib.ExitStack()

    def get(self, table_id: str, device_id: str) -> DeviceDriver:
        for driver in self.drivers:
            if driver.table_id == table_id and device_id in (driver.device_id, driver.kind):
                return driver
        raise KeyError(f"{table_id}/{device_id}")

    def published(self) -> list[tuple[str, str, int]]:
        """(table, device, seq of the last event this process handed to the bus; 0 before
        any) of every driver."""
        return [(d.table_id, d.device_id, d.handed_seq) for d in self.drivers]

    async def wait_online(self, within: float = 30.0) -> None:
        """Wait until every device is online and every bus connected (TimeoutError after ``within`` s)."""
        async with asyncio.timeout(within):
            while not all(d.online and d.bus.connected for d in self.drivers):
                if self._task is not None and self._task.done():
                    self._task.result()
                await asyncio.sleep(0.02)

    async def __aenter__(self) -> DriverSet:
        # Taken here, so that a busy device is refused by ``async with`` itself.
        self._locks.enter_context(run_locks(d.run_lock for d in self.drivers))
        self._task = asyncio.create_task(_serve(self.drivers), name="drivers")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._task is not None:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        finally:
            self._locks.close()  # a restart in this process takes them again
