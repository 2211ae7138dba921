"""A DeviceFeed whose missing seq never comes (the driver's replay buffer no longer has it,
or the driver gave it up as lost) asks a bounded number of times, then reports the seqs as
lost and stops asking, as the controller does (``gap_requests``)."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from drivers.consumer import DeviceFeed
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DeviceEvent, ReplayRequest, Topics


def _event(seq: int) -> DeviceEvent:
    return DeviceEvent(device="shoe-1", seq=seq, ts=datetime.now(UTC), event="shoe_loaded", data={})


async def test_a_permanently_lost_seq_is_given_up_and_reported(
    broker: BrokerSettings, table_id: str
) -> None:
    topics = Topics(table_id)
    asked: list[ReplayRequest] = []
    lost: list[list[int]] = []
    async with MessageBus(broker, "feed") as bus, MessageBus(broker, "nobody") as driver_side:
        await bus.wait_connected()
        await driver_side.wait_connected()

        async def listen() -> None:
            async with driver_side.subscribe(topics.replay("shoe-1"), ReplayRequest) as sub:
                async for received in sub:
                    asked.append(received.payload)

        listener = asyncio.create_task(listen())
        await asyncio.sleep(0.2)
        models = {topics.shoe_events: DeviceEvent}
        async with DeviceFeed(
            bus,
            topics,
            "shoe-1",
            models,
            repair_interval=0.05,
            gap_requests=4,
            on_lost=lost.append,
        ) as feed:  # type: ignore[arg-type]
            await asyncio.sleep(0.2)
            for seq in (1, 3, 4):  # seq 2 never comes, however often it is asked for
                await driver_side.publish(topics.shoe_events, _event(seq), qos=1)
            got = [await asyncio.wait_for(feed.get(), 10) for _ in range(3)]
            await asyncio.sleep(1.5)  # 30 repair rounds: it asked 4 times, then stopped
            await driver_side.publish(topics.shoe_events, _event(5), qos=1)
            fifth = await asyncio.wait_for(feed.get(), 10)
            await asyncio.sleep(0.3)
            stats = dict(feed.stats)
            missing = feed.tracker.missing("shoe-1")
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
    assert [e.seq for e in got] == [1, 3, 4] and fifth.seq == 5
    assert [(r.from_seq, r.to_seq) for r in asked] == [(2, 2)] * 4
    assert lost == [[2]] and stats["lost"] == 1 and missing == []


async def test_a_jump_of_the_numbering_is_skipped_not_asked_for(
    broker: BrokerSettings, table_id: str
) -> None:
    """A driver that lost its state numbers from the Unix time in ms: a jump, not a hole of
    1.8e12 seqs asked for 1,000 at a time for ever (each request a `replay_unavailable`
    health report from the driver; a review). As the controller, the feed skips it."""
    topics = Topics(table_id)
    asked: list[ReplayRequest] = []
    lost: list[list[int]] = []
    base = 1_796_000_000_000
    async with MessageBus(broker, "feed") as bus, MessageBus(broker, "driver") as driver_side:
        await bus.wait_connected()
        await driver_side.wait_connected()

        async def listen() -> None:
            async with driver_side.subscribe(topics.replay("shoe-1"), ReplayRequest) as sub:
                async for received in sub:
                    asked.append(received.payload)

        listener = asyncio.create_task(listen())
        await asyncio.sleep(0.2)
        models = {topics.shoe_events: DeviceEvent}
        async with DeviceFeed(
            bus, topics, "shoe-1", models, repair_interval=0.05, on_lost=lost.append
        ) as feed:  # type: ignore[arg-type]
            await asyncio.sleep(0.2)
            for seq in (1, 2, base + 1, base + 2):
                await driver_side.publish(topics.shoe_events, _event(seq), qos=1)
            got = [await asyncio.wait_for(feed.get(), 10) for _ in range(4)]
            await asyncio.sleep(0.8)  # 16 repair rounds
            stats = dict(feed.stats)
            contiguous = feed.tracker.last_contiguous("shoe-1")
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
    assert [e.seq for e in got] == [1, 2, base + 1, base + 2]
    assert asked == [] and lost == []
    assert stats["jumps"] == 1 and contiguous == base + 2
