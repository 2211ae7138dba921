"""A subscription whose owner leaves it once the bus's close has begun sends no UNSUBSCRIBE:
the session ends with the link anyway.

Before, its UNSUBSCRIBE was queued behind the close's DISCONNECT on the closing task group,
and its UNSUBACK never came: the close waited aiomqtt's 5 s timeout for it (the device
feed's give-up tests, whose listener is cancelled as their bus closes)."""

from __future__ import annotations

import asyncio
import contextlib

from link_support import DISCONNECT, SUBSCRIBE, UNSUBSCRIBE, BrokerLink

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics


async def test_a_subscription_left_as_the_bus_closes_sends_no_unsubscribe(
    broker: BrokerSettings, table_id: str
) -> None:
    topics = Topics(table_id)
    subscribed = asyncio.Event()
    async with BrokerLink(broker) as link:
        async with MessageBus(link.settings, "closing") as bus:
            await bus.wait_connected()

            async def listen() -> None:
                async with bus.subscribe(topics.shoe_cards, ShoeCard) as sub:
                    subscribed.set()
                    async for _ in sub:
                        pass

            listener = asyncio.create_task(listen(), name="listener")
            async with asyncio.timeout(20):
                await subscribed.wait()
            # In the same turn as the close: the owner leaves its subscription once the
            # close has begun (as a task group's children are cancelled on its way out).
            listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
        async with asyncio.timeout(20):
            await link.wait_client_gone()  # what the bus sent is all recorded
    assert link.sent.count(SUBSCRIBE) == 1 and link.sent[-1] == DISCONNECT
    assert UNSUBSCRIBE not in link.sent
