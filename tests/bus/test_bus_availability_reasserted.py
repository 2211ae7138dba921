"""A bus with an availability topic publishes its state again when another value lands
there.

A review: a refused second driver (and any process that once connected with the same
availability topic) left a retained ``offline`` behind, its last will or its stale state,
while the first driver ran fine; the bus re-sent its own state only on its own reconnect,
so the retained value stayed ``offline`` and the controller paused the table
(``device_offline``). Real brokers, no mock."""

from __future__ import annotations

import asyncio

import pytest
from retained_support import Raw, retained

from studio.bus import MessageBus
from studio.bus.client import OFFLINE, ONLINE
from studio.config import BrokerSettings


@pytest.mark.timeout(60)
async def test_another_value_on_the_availability_topic_is_overwritten_with_the_own_state(
    broker: BrokerSettings, table_id: str
) -> None:
    topic = f"studio/v1/tables/{table_id}/devices/shoe-1/availability"
    async with MessageBus(broker, f"{table_id}-drv", availability=topic) as owner:
        await owner.wait_connected()
        async with MessageBus(broker, f"{table_id}-other") as other:
            await other.wait_connected()
            async with other.subscribe(topic, Raw) as watch:
                await asyncio.sleep(0.3)
                # Another process's stale state (or its last will) on our topic.
                await other.publish(topic, OFFLINE, retain=True)
                await other.flush()
                seen: list[bytes] = []
                async with asyncio.timeout(5):
                    while seen[-1:] != [ONLINE] or OFFLINE not in seen:
                        seen.append((await watch.get()).payload.data)
        # Before: it stayed offline until the owner's own next reconnect.
        # (amqtt may hand a retained message twice: the values are what counts.)
        assert set(await retained(broker, topic)) == {(topic, ONLINE)}
        assert owner.stats.availability_reasserted == 1

        # Its own changes (and their echoes, arriving after the next change) are not taken
        # for another process's: nothing is re-sent for them.
        for state in (OFFLINE, ONLINE, OFFLINE):
            owner.availability_state = state
            await owner.publish(topic, state, retain=True)
        await owner.flush()
        await asyncio.sleep(0.5)
        assert owner.stats.availability_reasserted == 1
        assert set(await retained(broker, topic)) == {(topic, OFFLINE)}


@pytest.mark.timeout(60)
async def test_an_owner_s_subscription_to_its_availability_topic_left_keeps_the_bus_s_own(
    broker: BrokerSettings, table_id: str
) -> None:
    """Leaving a subscription whose filter is the availability topic itself sent the
    UNSUBSCRIBE that also ended the bus's own (not among the owner's subscriptions): until
    its next reconnect, another value there was not heard nor overwritten (a review)."""
    topic = f"studio/v1/tables/{table_id}/devices/shoe-1/availability"
    async with MessageBus(broker, f"{table_id}-drv", availability=topic) as owner:
        await owner.wait_connected()
        async with owner.subscribe(topic, Raw):
            await asyncio.sleep(0.3)
        await asyncio.sleep(0.3)  # (the UNSUBSCRIBE, if any, gone out and answered)
        async with MessageBus(broker, f"{table_id}-other") as other:
            await other.wait_connected()
            await other.publish(topic, OFFLINE, retain=True)
            await other.flush()
            async with asyncio.timeout(5):
                while owner.stats.availability_reasserted < 1:
                    await asyncio.sleep(0.05)
        assert set(await retained(broker, topic)) == {(topic, ONLINE)}
