"""Leaving a subscription behind a link that no longer passes the broker's answers (a
half-dead connection, as :class:`BrokerLink` makes one): the owner must not wait for an
UNSUBACK that never comes, or a driver's stop waits the client's 5 s per subscription
before its bus even starts its bounded flush."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from link_support import BrokerLink
from test_devices_robustness import until

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics

UNSUBACK = b"\xb0"


async def test_leaving_a_subscription_does_not_wait_for_the_brokers_answer(
    broker: BrokerSettings, table_id: str
) -> None:
    topic = Topics(table_id).shoe_cards
    async with BrokerLink(broker) as link, MessageBus(link.settings, "leaver") as bus:
        await bus.wait_connected()
        sub = bus.subscribe(topic, ShoeCard)
        await sub.__aenter__()  # subscribed: the SUBACK came through
        link.answers_lost = True
        await sub.__aexit__(None, None, None)
        # Before: the exit returned only after the client's timeout (5 s), long after the
        # broker's UNSUBACK had reached the link and been swallowed.
        assert link.dropped_answers == []
        # The UNSUBSCRIBE still goes out: the broker answers it with an UNSUBACK (packet
        # type 0xB0), which the link swallows.
        await until(lambda: any(data[:1] == UNSUBACK for data in link.dropped_answers))


async def test_subscribing_again_at_once_keeps_the_subscription(
    broker: BrokerSettings, table_id: str
) -> None:
    topic = Topics(table_id).shoe_cards
    card = ShoeCard(device="shoe-1", seq=1, ts=datetime.now(UTC), card="QH", shoe="S1")
    async with MessageBus(broker, "resub") as bus, MessageBus(broker, "pub") as publisher:
        await bus.wait_connected()
        async with bus.subscribe(topic, ShoeCard):
            pass
        # The UNSUBSCRIBE of the first must not land after the SUBSCRIBE of the second.
        async with bus.subscribe(topic, ShoeCard) as again:
            await publisher.publish(topic, card)
            async with asyncio.timeout(20):
                received = await again.get()
    assert (received.payload.seq, received.payload.card) == (card.seq, card.card)
