"""A device's bus stopped behind a link that loses the broker's answers (the broker is up,
what the device sends reaches it, no PUBACK comes back): its ``offline`` must still be the
broker's retained availability.

Its stop no longer waits for that ``offline``'s PUBACK once the flush before it has timed
out (the wait only added 2 s); the message is handed to the
socket ahead of the DISCONNECT all the same, which this test holds on both brokers.
"""

from __future__ import annotations

import asyncio
import contextlib

from link_support import BrokerLink
from test_bus_roundtrip import card

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Availability, Topics


async def test_a_stop_behind_a_mute_link_leaves_offline_retained(
    broker: BrokerSettings, table_id: str
) -> None:
    topics = Topics(table_id)
    avail = topics.availability("shoe-1")
    acked: list[int] = []
    running = asyncio.Event()

    async def device(link: BrokerLink) -> None:
        # The stop's flush times out (0.5 s instead of 2: its PUBACK never comes either way).
        async with MessageBus(link.settings, "muted", availability=avail, stop_flush=0.5) as bus:
            await bus.wait_connected()
            await bus.publish(topics.shoe_cards, card(1), on_acked=lambda: acked.append(1))
            await bus.flush()
            link.answers_lost = True
            # Never acknowledged: the stop's flush times out on it.
            await bus.publish(topics.shoe_cards, card(2), on_acked=lambda: acked.append(2))
            running.set()
            await asyncio.Event().wait()

    async with BrokerLink(broker) as link:
        task = asyncio.create_task(device(link))
        async with asyncio.timeout(20):
            await running.wait()
        task.cancel()  # a stop (SIGTERM)
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(20):
                await task
    assert acked == [1]
    async with MessageBus(broker, "watcher") as watcher:
        async with watcher.subscribe(avail, Availability) as sub, asyncio.timeout(20):
            state = (await sub.get()).payload.state
    assert state == "offline"
