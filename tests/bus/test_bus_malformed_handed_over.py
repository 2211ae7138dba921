"""``subscribe(..., on_malformed=)``: a consumer that answers a malformed payload (the
controller's game commands, answered on ``game/command_errors``) is handed each one.

Before, a payload that failed validation was only logged and counted in the bus: its
consumer never saw it, and so could not answer it.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from studio.bus import Malformed, MessageBus
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics


def card(seq: int) -> ShoeCard:
    return ShoeCard(device="shoe-1", seq=seq, ts=datetime.now(UTC), card="QH", shoe="S1")


async def test_each_malformed_payload_is_handed_over_in_its_turn(
    broker: BrokerSettings, table_id: str
) -> None:
    topics = Topics(table_id)
    handed: list[Malformed] = []
    seen_before: list[int] = []

    async def answer(malformed: Malformed) -> None:
        handed.append(malformed)
        if len(handed) == 2:
            raise RuntimeError("the consumer's answer failed")  # logged, not raised

    async with (
        MessageBus(broker, "consumer") as consumer,
        MessageBus(broker, "producer") as producer,
    ):
        async with consumer.subscribe(topics.shoe_cards, ShoeCard, on_malformed=answer) as sub:
            await consumer.wait_connected()
            await producer.publish(topics.shoe_cards, card(1))
            await producer.publish(topics.shoe_cards, b"{not json")
            await producer.publish(topics.shoe_cards, b'{"device": "x", "seq": 0}')
            await producer.publish(topics.shoe_cards, card(2))
            async with asyncio.timeout(10):
                first = await sub.get()
                seen_before.append(len(handed))
                second = await sub.get()
    assert (first.payload.seq, second.payload.seq) == (1, 2)
    assert seen_before == [0]  # handed over as they came, between the good ones
    assert [m.payload for m in handed] == [b"{not json", b'{"device": "x", "seq": 0}']
    assert all(m.topic == topics.shoe_cards and m.retain is False for m in handed)
    assert "Invalid JSON" in str(handed[0].error)
    assert consumer.stats.malformed[topics.shoe_cards] == 2  # counted as before


async def test_a_topics_malformed_payloads_are_logged_once_an_interval_and_all_counted(
    broker: BrokerSettings, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One WARNING line each: a device sending garbage wrote 5,000 lines in 2 s (a
    pentest, 2026-12-07). The first of a topic is logged at once, the next one once
    MALFORMED_LOG_INTERVAL_SECONDS have passed; every one is counted."""
    topics = Topics(table_id)
    caplog.set_level(logging.WARNING, logger="studio.bus.client")
    async with (
        MessageBus(broker, "consumer") as consumer,
        MessageBus(broker, "producer") as producer,
    ):
        async with consumer.subscribe(topics.shoe_cards, ShoeCard) as sub:
            await consumer.wait_connected()
            for _ in range(50):
                await producer.publish(topics.shoe_cards, b"{not json")
            await producer.publish(topics.shoe_cards, card(1))
            async with asyncio.timeout(10):
                await sub.get()
    lines = [r for r in caplog.records if r.getMessage().startswith("malformed payload on")]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert consumer.stats.malformed[topics.shoe_cards] == 50
