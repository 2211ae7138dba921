"""An ACME-STX shoe simulated on a pty for the driver tests: its port open and heartbeating,
a recorder of the table's topics and, with ``acme_online``, the driver online to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

from devices_rig import Recorder
from test_devices_robustness import recording

from drivers.runner import DriverSet
from hwsim.pty_port import PtyPort
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings, StudioConfig, TableSettings

# A table's shoe and shuffler, as a config file's text, for the commands that read the
# config only (``forget-device``): their ports are never opened.
SHOE_AND_SHUFFLER_CONFIG = """\
[broker]
url = "mqtt://127.0.0.1:1883"

[[tables]]
id = "t1"
devices = [
  { id = "shoe-1", kind = "shoe", port = "/dev/null-shoe" },
  { id = "shuffler-1", kind = "shuffler", port = "/dev/null-shuffler" },
]
"""


class HeartbeatingShoe(Protocol):
    port: PtyPort

    async def heartbeats(self) -> None: ...


def acme_config(table_id: str, port: Path, **options: object) -> StudioConfig:
    # No test here drops the link by silence; the wrap checks' tests keep the device quiet
    # (no heartbeats) for a check's RESENDs and HELLO, which on a loaded CI machine took
    # over 2 s: the link dropped mid-check and the test timed out (seen twice in CI).
    settings = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(port), heartbeat_timeout=8.0,
        options={"protocol": "acme-stx-shoe", **options},
    )  # fmt: skip
    return StudioConfig(tables=[TableSettings(id=table_id, devices=[settings])])


@asynccontextmanager
async def acme_line(
    device: HeartbeatingShoe, broker: BrokerSettings, table_id: str
) -> AsyncIterator[Recorder]:
    """The device's port open and heartbeating, and a recorder of the table's topics; the
    driver is the test's own (started twice over a state dir, say)."""
    device.port.open()
    beats = asyncio.create_task(device.heartbeats(), name="acme-heartbeats")
    try:
        async with recording(broker, table_id) as rec:
            yield rec
    finally:
        beats.cancel()
        # Its end awaited: no heartbeat left pending to write after the port is closed.
        with contextlib.suppress(asyncio.CancelledError):
            await beats
        device.port.close()


@asynccontextmanager
async def acme_online(
    device: HeartbeatingShoe, broker: BrokerSettings, table_id: str, **options: object
) -> AsyncIterator[tuple[Recorder, DriverSet]]:
    """``acme_line``, and a driver for the device (``options``: its protocol options) online.

    Set up what the device holds before this: the driver's first contact reads it."""
    async with acme_line(device, broker, table_id) as rec:
        config = acme_config(table_id, device.port.link, **options)
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            yield rec, drivers
