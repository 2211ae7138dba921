"""What a long day on the studio floor does to a driver: a shoe unplugged for hours, ports
renumbered after a replug, a firmware reset behind an adapter that keeps the link, a
driver stopped while the broker is away, a full disk. No card may be lost or doubled,
and no device may take the others of its process down."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from drivers.shoe import ShoeDriver
from studio.backoff import Backoff
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings


async def test_a_device_unplugged_for_long_is_retried_for_ever(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(tmp_path / "unplugged"))
    # 1024 failures in a row took 32 minutes at the real backoff, then the driver died.
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(initial=1e-6, maximum=1e-4))
    task = asyncio.create_task(driver.run(), name="driver")
    try:
        async with asyncio.timeout(60):
            while driver.stats["disconnects"] <= 1100:
                assert not task.done(), task
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
