"""Simulator determinism, and replay from the driver's buffer deduplicated by a DeviceFeed."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from devices_rig import Rig

from drivers.consumer import DeviceFeed
from hwsim.table import SimTable
from studio.cards import full_deck
from studio.contract import DeviceEvent, ReplayRequest, ShoeCard


def _shoe_order(seed: int, tmp_path: Path) -> list[str]:
    table = SimTable("t1", seed=seed, decks=6, base_dir=tmp_path, pty=False)
    table.new_shoe()
    return [c.code for _ in range(60) for c in table.deal()]


def test_seeded_shoe_is_reproducible_and_a_real_multi_deck_shoe(tmp_path: Path) -> None:
    assert _shoe_order(7, tmp_path) == _shoe_order(7, tmp_path)
    assert _shoe_order(7, tmp_path) != _shoe_order(8, tmp_path)
    table = SimTable("t1", seed=1, decks=6, base_dir=tmp_path, pty=False)
    table.new_shoe()
    assert Counter(table.shoe.cards) == Counter(full_deck() * 6)
    assert table.cut_index == int(312 * 0.75)


async def test_replay_request_republishes_and_the_feed_drops_duplicates(rig: Rig) -> None:
    topics = rig.topics
    models = {topics.shoe_cards: ShoeCard, topics.shoe_events: DeviceEvent}
    async with DeviceFeed(rig.consumer, topics, "shoe-1", models) as feed:  # type: ignore[arg-type]
        dealt = [c.code for _ in range(5) for c in rig.table.deal()]
        first = [await asyncio.wait_for(feed.get(), 20) for _ in range(5)]
        await rig.consumer.publish(
            topics.replay("shoe-1"),
            ReplayRequest(from_seq=first[1].seq, to_seq=first[3].seq, requester="test"),
        )
        # The driver re-publishes seq 2..4: the raw topic shows them twice ...
        await rig.rec.wait(lambda: len(rig.rec.cards) >= 8)
        assert [c.seq for c in rig.rec.cards[5:]] == [c.seq for c in first[1:4]]
        # ... and the feed yields each (device, seq) once.
        await asyncio.sleep(0.3)
        assert feed.payloads() == []
        assert feed.stats["duplicates"] == 3
    assert [c.card for c in first] == dealt  # type: ignore[attr-defined]
    assert rig.drivers.get(rig.table.id, "shoe-1").stats["replayed"] == 3
