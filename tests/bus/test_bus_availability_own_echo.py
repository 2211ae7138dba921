"""A bus never takes its own availability message for another process's.

A stop probe: once in 38 demo starts on the embedded broker, a shuffler's and a cut-card
driver's buses warned "b'offline' on its availability topic ..., not its own b'online'
(another process, or a stale last will): published again" as their devices came online,
with no other process about. The bus published its ``offline`` at its connect before
subscribing to the topic; amqtt queues the broadcast of a publish and ran it, under a
start's load, after the bus's SUBSCRIBE: the ``offline`` came back twice (retained, then
live), and the second, with the driver online by then, looked like another writer's.
Real brokers, no mock."""

from __future__ import annotations

import asyncio

import pytest
from retained_support import Raw, retained

from studio.bus import MessageBus
from studio.bus.client import OFFLINE, ONLINE
from studio.config import BrokerSettings

DEVICES = ("shoe-1", "shuffler-1", "cutcard-1")
ROUNDS = 4


def _availability(table: str, device: str) -> str:
    return f"studio/v1/tables/{table}/devices/{device}/availability"


async def _driver(broker: BrokerSettings, table: str, device: str) -> MessageBus:
    """A driver's bus: ``offline`` until its device answers, at once after the connect."""
    topic = _availability(table, device)
    bus = MessageBus(broker, f"drv-{table}-{device}", availability=topic)
    bus.availability_state = OFFLINE
    async with bus:
        async with bus.subscribe(f"studio/v1/tables/{table}/devices/{device}/commands", Raw):
            await bus.wait_connected()
            bus.availability_state = ONLINE
            await bus.publish(topic, ONLINE, retain=True)
            for _ in range(20):
                await bus.publish(f"studio/v1/tables/{table}/shoe/events", b"x" * 50)
            await bus.flush()
            await asyncio.sleep(0.3)  # any re-assertion is decided by now
    return bus


async def _state_writer(broker: BrokerSettings, table: str) -> None:
    """A controller's start: a burst of retained table states."""
    async with MessageBus(broker, f"ctl-{table}") as bus:
        for _ in range(300):
            await bus.publish(f"studio/v1/tables/{table}/state", b"y" * 100, retain=True)
        await bus.flush()


@pytest.mark.timeout(120)
async def test_drivers_coming_online_as_a_busy_broker_starts_never_reassert(
    broker: BrokerSettings, table_id: str
) -> None:
    """Before, on the embedded broker, most rounds had a driver warn and publish again (15
    of 20 rounds of six drivers in a loop); now none does, on either broker."""
    ours = f"studio/v1/tables/{table_id}-"
    async with MessageBus(broker, f"{table_id}-controller") as controller:
        # A controller listening on every table (amqtt hands its filter's retained messages
        # to each client that connects).
        async with controller.subscribe(
            "studio/v1/tables/#", Raw, accept=lambda t: t.startswith(ours)
        ):
            await controller.wait_connected()
            for round_no in range(ROUNDS):
                tables = [f"{table_id}-{round_no}{n}" for n in range(2)]  # a fresh start's topics
                drivers = await asyncio.gather(
                    _state_writer(broker, tables[0]),
                    *(_driver(broker, table, device) for table in tables for device in DEVICES),
                )
                reasserted = [
                    bus.client_id
                    for bus in drivers
                    if isinstance(bus, MessageBus) and bus.stats.availability_reasserted
                ]
                assert reasserted == [], round_no


@pytest.mark.timeout(60)
async def test_a_stale_value_is_overwritten_silently_and_a_later_writer_still_reasserted(
    broker: BrokerSettings, table_id: str
) -> None:
    """Subscribed before its publish, the bus is handed the stale value retained (a killed
    process's last will): older than its own publish, which overwrites it, it is no news.
    Another process's value written after is still published over."""
    topic = _availability(table_id, "shoe-1")
    async with MessageBus(broker, f"{table_id}-dead") as dead:
        await dead.publish(topic, OFFLINE, retain=True)  # as its last will would have
        await dead.flush()
    async with MessageBus(broker, f"{table_id}-drv", availability=topic) as owner:
        await owner.wait_connected()
        await owner.flush()
        await asyncio.sleep(0.5)
        assert owner.stats.availability_reasserted == 0
        assert set(await retained(broker, topic)) == {(topic, ONLINE)}

        async with MessageBus(broker, f"{table_id}-other") as other:
            await other.publish(topic, OFFLINE, retain=True)
            await other.flush()
        async with asyncio.timeout(5):
            while owner.stats.availability_reasserted == 0:
                await asyncio.sleep(0.05)
        await owner.flush()
        await asyncio.sleep(0.3)
        assert owner.stats.availability_reasserted == 1
        assert set(await retained(broker, topic)) == {(topic, ONLINE)}
