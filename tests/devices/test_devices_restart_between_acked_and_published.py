"""A driver restarted from its state dir, whose device power-cycled meanwhile and says in its
HELLO a count between what the broker acknowledged and what the old driver published: a
numbering reset, not a forged claim (a review of 8cf10c0, fixed in 5f23e3c).

The old driver published cards 1..8 (6 delivered, 7 and 8 still in the bus's outbox behind
its acknowledgement), the broker acknowledged only 1..5 (so the restarted
driver loads last_device_seq 5, published 8). The shoe (the SDL/1 simulator, keeping only
its last frame for RESEND, so the check event cannot be fetched: NAK E04) deals 6 new cards
while no driver runs; its HELLO says 6."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import HEARTBEAT, saved_state
from link_support import BrokerLink
from test_devices_restart_numbering import STOP_FLUSH, seqs_of
from test_devices_robustness import recording, shoe_config, until

from drivers.runner import DriverSet
from hwsim.shoe import SimShoe
from studio.config import BrokerSettings

OLD = ["QH", "7C", "AS", "2D", "KD", "9S", "4C", "JH"]
NEW = ["5H", "6H", "7H", "8H", "9H", "TH"]  # dealt while no driver ran; HELLO says 6
LIVE = "JS"  # dealt once the new driver is online: the new numbering's 7


def deal(shoe: SimShoe, code: str) -> None:
    shoe.emit("CARD", code, "S1")


async def test_a_hello_between_acked_and_published_after_a_driver_restart_is_a_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    shoe = SimShoe("shoe-1", tmp_path / "shoe-1", heartbeat_interval=HEARTBEAT, resend_buffer=1)
    await shoe.start()
    try:
        async with recording(broker, table_id) as rec:
            config = shoe_config(table_id, shoe.port, gap_timeout=0.3)
            async with BrokerLink(broker) as link:
                async with DriverSet(
                    config, broker=link.settings, state_dir=state, stop_flush=STOP_FLUSH
                ) as drivers:
                    driver = drivers.get(table_id, "shoe-1")
                    await drivers.wait_online(20)
                    for code in OLD[:5]:
                        deal(shoe, code)
                    await until(lambda: driver._acked[0] == 5)
                    link.answers_lost = True  # 6..8 handed to the bus, never acknowledged
                    for code in OLD[5:]:
                        deal(shoe, code)
                    await rec.wait(lambda: len(rec.cards) >= 6)  # 7, 8 wait behind 6's ack
                    await until(lambda: saved_state(state, table_id)["published"] == 8)
            saved = saved_state(state, table_id)
            assert (saved["last_device_seq"], saved["published"]) == (5, 8)
            base = int(saved["offset"])
            # Power-cycled while unplugged: the new cards never reach the wire, and only
            # the last one stays in the resend buffer.
            await shoe.unplug()
            shoe.seq = 0
            shoe._buffer.clear()
            for code in NEW:
                deal(shoe, code)
            await until(lambda: shoe._out.empty())
            await shoe.plug()
            async with DriverSet(config, broker=broker, state_dir=state) as drivers:
                await drivers.wait_online(20)
                await asyncio.sleep(0.3)  # the HELLO and the check's RESEND (NAK E04) answered
                deal(shoe, LIVE)
                await rec.wait(lambda: any(c.card == LIVE for c in rec.cards), timeout=5)
                await asyncio.sleep(0.3)  # anything published again would show up now
    finally:
        await shoe.stop()
    seqs = seqs_of(rec, base)
    # Before: no reset; TH went out as seq 6 (9S's, which subscribers have) and JS as 7.
    assert {s: cards for s, cards in seqs.items() if len(cards) > 1} == {}
    resets = [e.seq - base for e in rec.events(rec.topics.shoe_events, "numbering_reset")]
    assert len(resets) == 1 and resets[0] > len(OLD), resets
    old = {seq for seq, cards in seqs.items() if cards & set(OLD)}
    new = {seq for seq, cards in seqs.items() if cards & {*NEW, LIVE}}
    assert old == set(range(1, 7))
    assert new and min(new) > resets[0], (resets, seqs)
    assert {c.card for c in rec.cards} >= {NEW[-1], LIVE}
