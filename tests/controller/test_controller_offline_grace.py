"""A device's ``offline`` taken back by its ``online`` within a few seconds is no outage.

A broker stopping cleanly (Mosquitto on SIGTERM) hands out the last will of every client
still connected: the controller, still connected itself, took each driver's ``offline`` as
an outage, raised ``device_offline`` and paused the table, and the alerts stayed open when
the drivers came back seconds later (a review). The controller holds an ``offline`` for
``offline_grace`` seconds; one still standing then is taken, as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import Availability, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

GRACE = 1.0


async def test_an_offline_taken_back_within_its_grace_is_no_alert_and_one_that_stands_is(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    topic = Topics(table_id).availability("shoe-1")
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        ControllerService(
            config, bus, EventLog(db), Fanout(bus), timers=False, offline_grace=GRACE
        ) as service,
    ):
        shoe = service.tables[table_id].devices

        async def say(state: str) -> None:
            await device.publish(topic, Availability(state=state).to_wire())  # type: ignore[arg-type]

        await device.wait_connected()
        async with asyncio.timeout(20):
            while shoe["shoe-1"].availability != "online":
                await say("online")
                await asyncio.sleep(0.2)
        await say("offline")  # the broker stopping: the driver's last will
        await asyncio.sleep(GRACE / 4)
        await say("online")  # the driver back on the restarted broker
        await asyncio.sleep(GRACE * 2)
        assert service.alerts() == []
        assert not service.tables[table_id].paused
        assert shoe["shoe-1"].availability == "online"
        await say("offline")  # away for good
        async with asyncio.timeout(GRACE + 15):
            while not service.alerts():
                await asyncio.sleep(0.1)
        assert [a["code"] for a in service.alerts()] == ["device_offline"]
        assert service.tables[table_id].paused
