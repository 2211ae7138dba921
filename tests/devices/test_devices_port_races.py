"""A port that vanishes at the worst moment: between pyserial's open and the driver's own
setup of the tty. The driver must retry like any unplug, not take its process down."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
from devices_rig import TIMEOUT, ScriptedShoe, start_recorder

import drivers.transport
from drivers.shoe import ShoeDriver
from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.contract import Topics
from studio.errors import DeviceError


async def test_a_port_hung_up_as_it_opens_is_a_device_error(tmp_path: Path) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe:
        original = drivers.transport.SerialTransport.__init__

        def unplug_then_setup(self: Any, port: Any, name: str) -> None:
            shoe.port.close()  # the cable pulled after pyserial opened the tty
            original(self, port, name)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(drivers.transport.SerialTransport, "__init__", unplug_then_setup)
            with pytest.raises(DeviceError, match="cannot set up"):
                await drivers.transport.open_transport(str(shoe.port.link))


async def test_an_unplug_while_the_port_opens_does_not_stop_the_driver(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    async with (
        ScriptedShoe(tmp_path / "shoe-1") as shoe,
        MessageBus(broker, "rec") as bus,
        asyncio.TaskGroup() as group,
    ):
        rec = await start_recorder(bus, topics, group)
        settings = DeviceSettings(
            id="shoe-1", kind="shoe", port=str(shoe.port.link), heartbeat_timeout=TIMEOUT
        )
        driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(initial=0.01, maximum=0.1))
        original = drivers.transport.SerialTransport.__init__
        opens = 0

        def unplug_on_second_open(self: Any, port: Any, name: str) -> None:
            nonlocal opens
            opens += 1
            if opens == 2:
                shoe.port.close()  # unplugged just as the reconnect opened the port
            original(self, port, name)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(drivers.transport.SerialTransport, "__init__", unplug_on_second_open)
            task = asyncio.create_task(driver.run(), name="driver")
            try:
                await rec.wait(lambda: driver.online)
                shoe.card("QH")
                await rec.wait(lambda: rec.cards)
                shoe.heartbeats = False  # silent: the driver reconnects (its 2nd open)
                async with asyncio.timeout(20):
                    while not (opens >= 2 and not shoe.port.is_open):
                        await asyncio.sleep(0.01)
                await asyncio.sleep(0.3)  # the driver's retries meet an unplugged port
                assert not task.done(), task  # before: termios.error ended the driver
                shoe.heartbeats = True
                shoe.port.open()  # replugged
                shoe.card("7C")
                await rec.wait(lambda: len(rec.cards) >= 2)
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        rec.stop()
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C")]
