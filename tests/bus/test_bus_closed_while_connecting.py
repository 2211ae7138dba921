"""A bus closed while its session is being set up (its subscriptions renewed, its
availability published) stops: the close never waits for ever.

aiomqtt waits for each of the broker's answers with ``asyncio.wait_for``, which on Python
3.11 drops a cancellation that lands as the answer arrives. The close's cancellation of the
bus's task was lost so: the task went on to serve the session, and the close waited for it
for ever. A ``studio drivers run`` stopped just after its start never exited (a CI run of
2026-12-07); a first sweep of this test hung 5 closes in 200 on the embedded broker.

The moment is a matter of microseconds, so the closes sweep the first 30 ms of the
connection: each one that hung before now ends within the flush's bound. An answer that
comes after its wait was cancelled is no error either: aiomqtt logged "Unexpected message
ID" at ERROR with a traceback (7 or 8 times in these 400 closes).
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics

CLOSES = 200


@pytest.mark.timeout(300)
async def test_a_bus_closed_in_the_middle_of_its_setup_stops(
    broker: BrokerSettings, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    topics = Topics(table_id)
    hung: list[float] = []
    for i in range(CLOSES):
        delay = (i % 100) * 0.0003  # 0 to 30 ms after the start: the connect and the setup
        bus = MessageBus(broker, f"closing-{i}", availability=topics.availability(f"d{i}"))
        try:
            # The flush and the offline message are bounded (5 s and 2 s): far less than this.
            async with asyncio.timeout(15):
                async with bus, bus.subscribe(topics.shoe_cards, ShoeCard):
                    await asyncio.sleep(delay)
        except TimeoutError:
            hung.append(delay)
            break  # (what hangs is cancelled by the timeout; one is enough to say it)
    assert not hung, f"a close hung {delay * 1000:.1f} ms after the bus started"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors[:3]


async def test_a_bus_entered_again_after_its_close_connects(
    broker: BrokerSettings, table_id: str
) -> None:
    """The close's marks (closing, its task cancelled) are the close's alone: a bus entered
    again serves as a new one (a review: the second session ended at its first answer)."""
    topics = Topics(table_id)
    bus = MessageBus(broker, "reused", availability=topics.availability("d"), close_flush=0.5)
    for _ in range(2):
        async with bus:
            async with asyncio.timeout(15):
                await bus.wait_connected()
                await bus.publish(topics.shoe_cards, b"{}")
                await bus.flush()  # acknowledged by the broker: the session serves
