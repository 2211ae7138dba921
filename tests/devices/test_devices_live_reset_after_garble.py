"""A device that restarts its numbering on a live link (a reboot behind a USB adapter or
ser2net) right after one of its frames was garbled on the line, before a heartbeat told its
count: that frame may have been a card dealt under the old numbering, which no RESEND can
bring and no hole in the bus seqs shows. Not announced, it was lost without a word: no
``numbering_reset``, no ``frames_lost``, the health report saying only "restarted its
numbering" (a fault-injection review)."""

from __future__ import annotations

from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe

from studio.config import BrokerSettings


async def test_a_live_reset_after_an_unreadable_frame_is_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False  # the reboot comes before the next count
        garbled = shoe.card("5S", send=False).replace(b"5S", b"5X")  # checksum fails
        shoe.port.write(garbled)
        shoe.restart()  # the link stays up; numbering from 1 again
        shoe.event("SHOE", "S2", "8")  # seq 1 again
        shoe.card("KD", "S2")
        shoe.card("9S", "S2")
        shoe.card("4H", "S2")
        cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
        shoe.heartbeats = True
        resets = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "numbering_reset"))
        loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
    assert driver.stats["frame_checksum"] == 1
    # Before: no numbering_reset; KD, 9S and 4H went out as 5, 6, 7 with seq 4 (the lost
    # card's) never a hole, as after a reset whose every frame was read.
    assert [(e.seq, e.data["last_seen"], e.data["count"]) for e in resets] == [(4, 3, 1)]
    assert "unreadable" in resets[0].data["reason"]
    assert [e.seq for e in loaded] == [5]
    assert [(c.seq, c.card) for c in cards] == [
        (1, "QH"),
        (2, "7C"),
        (3, "AS"),
        (6, "KD"),
        (7, "9S"),
        (8, "4H"),
    ]
    assert driver.offset == 4


async def test_a_live_reset_with_every_frame_read_is_not_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        beats = driver.stats["heartbeats"]
        shoe.port.write(b"\x00garbage\r\n")  # unreadable, then a count tells of nothing lost
        await rec.wait(lambda: driver.stats["heartbeats"] >= beats + 1)
        errors = sum(n for key, n in driver.stats.items() if key.startswith("frame_"))
        shoe.restart()
        shoe.event("SHOE", "S2", "8")
        shoe.card("KD", "S2")
        shoe.card("9S", "S2")
        shoe.card("4H", "S2")
        cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
    assert errors >= 1
    assert [c.seq for c in cards] == [1, 2, 3, 5, 6, 7]
    assert rec.events(rec.topics.shoe_events, "numbering_reset") == []
    assert driver.offset == 3
