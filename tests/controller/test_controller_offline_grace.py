"""A device's ``offline`` taken back by its ``online`` within a few seconds is no outage.

A broker stopping cleanly (Mosquitto on SIGTERM) hands out the last will of every client
still connected: the controller, still connected itself, took each driver's ``offline`` as
an outage, raised ``device_offline`` and paused the table, and the alerts stayed open when
the drivers came back seconds later (a review). The controller holds an ``offline`` for
``offline_grace`` seconds; one still standing then is taken, as before.

A broker away longer than the grace (a drill: Mosquitto stopped 12 s) had the controller
take every driver's last will once the grace ended, its own link still down, or just back
before the drivers were: every table paused, a ``device_offline`` per device, the devices
fine. The grace does not run while the controller's link is down, and after it comes back
an ``offline`` is held ``offline_rejoin_grace`` seconds for the drivers to reconnect too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from link_support import BrokerLink

from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import Availability, Topics
from studio.controller import ControllerService
from studio.controller.service import OFFLINE_HOLD_REJOINS
from studio.store import Database, EventLog
from studio.streams import Fanout

GRACE = 1.0


@dataclass
class Rig:
    link: BrokerLink
    bus: MessageBus  # the controller's, behind the link
    service: ControllerService
    say: Callable[[str], Awaitable[None]]  # the driver's availability of shoe-1, retained


@asynccontextmanager
async def behind_a_link(
    broker: BrokerSettings, tmp_path: Path, table_id: str, grace: float, rejoin: float
) -> AsyncIterator[Rig]:
    """A controller of one table behind a link that can be cut, its driver not behind it,
    the shoe online."""
    topic = Topics(table_id).availability("shoe-1")
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    # A connect through the cut link gives up in 1.5 s, and the bus retries within 0.25 s
    # of the link's return.
    quick = {"client_timeout": 1.5, "backoff": Backoff(initial=0.05, maximum=0.25)}
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        BrokerLink(broker) as link,
        MessageBus(broker, f"dev-{table_id}") as device,  # the driver: not behind the link
        MessageBus(link.settings, f"ctl-{table_id}", **quick) as bus,
        ControllerService(
            config,
            bus,
            EventLog(db),
            Fanout(bus),
            timers=False,
            offline_grace=grace,
            offline_rejoin_grace=rejoin,
        ) as service,
    ):
        table = service.tables[table_id]

        async def say(state: str) -> None:
            await device.publish(topic, Availability(state=state).to_wire(), retain=True)  # type: ignore[arg-type]

        await device.wait_connected()
        await bus.wait_connected()
        async with asyncio.timeout(20):
            while table.devices["shoe-1"].availability != "online":
                await say("online")
                await asyncio.sleep(0.2)
        yield Rig(link, bus, service, say)


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


async def until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_no_offline_is_taken_while_the_link_is_down_nor_before_the_drivers_rejoin(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    grace, rejoin = 0.4, 2.0
    async with behind_a_link(broker, tmp_path, table_id, grace, rejoin) as rig:
        link, bus, service, say = rig.link, rig.bus, rig.service, rig.say
        table = service.tables[table_id]

        # The broker stopping: the driver's last will, then the controller's link down for
        # longer than the grace. Before: taken once the grace ended, the link still down.
        await say("offline")
        await asyncio.sleep(0.2)
        link.break_link()
        await until(lambda: not bus.connected)
        await asyncio.sleep(grace * 3)
        assert service.alerts() == []
        # The link back: the will, retained, is handed over again; the driver rejoins later
        # than the grace after it (before: taken, the table paused), within the rejoin grace.
        link.cut = False
        await until(lambda: bus.connected)
        await asyncio.sleep(grace * 2)
        assert service.alerts() == []
        await say("online")
        await asyncio.sleep(rejoin + grace)
        assert service.alerts() == []
        assert not table.paused
        assert table.devices["shoe-1"].availability == "online"

        # Once more, and the driver does not come back: a real outage, raised after the
        # rejoin grace.
        link.break_link()
        await until(lambda: not bus.connected)
        await say("offline")
        link.cut = False
        await until(lambda: bus.connected)
        await until(lambda: bool(service.alerts()), timeout=rejoin + 15)
        assert [a["code"] for a in service.alerts()] == ["device_offline"]
        assert table.paused
        assert table.devices["shoe-1"].availability == "offline"


@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_device_that_died_is_raised_while_the_link_keeps_flapping(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """Each return of the link held the offline the rejoin grace anew: a link dropping again
    within it each time held a dead device for good, shown online, the table dealing (a
    review, 2026-12-07). It is held OFFLINE_HOLD_REJOINS rejoin graces at most."""
    grace, rejoin = 0.4, 1.5
    async with behind_a_link(broker, tmp_path, table_id, grace, rejoin) as rig:
        link, bus, service, say = rig.link, rig.bus, rig.service, rig.say
        table = service.tables[table_id]
        await say("offline")  # the device is gone, and the link flaps from now on
        async with asyncio.timeout(OFFLINE_HOLD_REJOINS * rejoin + 20):
            while not service.alerts():
                link.break_link()
                await until(lambda: not bus.connected)
                link.cut = False
                await until(lambda: bus.connected)
                await asyncio.sleep(rejoin / 2)  # back for less than the rejoin grace
        assert [a["code"] for a in service.alerts()] == ["device_offline"]
        assert table.devices["shoe-1"].availability == "offline"
