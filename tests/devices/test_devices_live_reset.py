"""A device that restarts its numbering while its link stays up (a firmware reset behind a
USB adapter or ser2net) and sends its first new events before any heartbeat tells of the
reset: those events come under seqs the driver has already published. A resend from the
device's buffer is the same frame again; another frame under a published seq is the new
numbering, and dropping it as a duplicate lost it without a word."""

from __future__ import annotations

from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe

from studio.config import BrokerSettings


async def test_new_events_under_published_seqs_are_not_taken_for_duplicates(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.restart()  # the link stays up; numbering from 1 again
        shoe.event("SHOE", "S2", "8")  # seq 1 again
        shoe.card("KD", "S2")  # seq 2 again
        shoe.card("9S", "S2")  # seq 3 again: no heartbeat will show a seq going back
        shoe.card("4H", "S2")  # seq 4
        cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
        loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
        report = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
        )
    assert [c.card for c in cards] == ["QH", "7C", "AS", "KD", "9S", "4H"]
    assert [c.seq for c in cards] == [1, 2, 3, 5, 6, 7]
    assert [e.seq for e in loaded] == [4]
    assert report[0].status == "degraded"
    assert driver.offset == 3


async def test_a_resend_of_published_frames_is_still_a_duplicate(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        for seq in (1, 2, 3):
            shoe.port.write(shoe.sent[seq])  # the same frames again (a resend)
        shoe.card("2D")
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["duplicates"] == 3


async def test_a_reset_while_unplugged_with_more_new_events_is_seen_on_replug(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.card("QH")
        shoe.card("7C")
        await rec.wait(lambda: len(rec.cards) >= 2)
        shoe.port.close()  # unplugged: the driver reconnects, with backoff
        shoe.restart()  # and power-cycled meanwhile
        shoe.event("SHOE", "S2", "8", send=False)
        shoe.card("KD", "S2", send=False)
        shoe.card("9S", "S2", send=False)  # its HELLO says 3: not below the 2 published
        shoe.port.open()
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
        loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
        await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
        )
    # Before: the driver asked for 3 on, published 9S as seq 3 and never knew of the SHOE
    # and KD frames before it.
    # (Seq 3 is the numbering_reset event published at the replug.)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (5, "KD"), (6, "9S")]
    assert [e.seq for e in loaded] == [4]
    assert driver.offset == 3
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [3]


async def test_a_replug_without_a_reset_keeps_the_numbering(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.card("QH")
        shoe.card("7C")
        await rec.wait(lambda: len(rec.cards) >= 2)
        shoe.port.close()
        shoe.card("KD", send=False)  # dealt while unplugged
        shoe.port.open()
        cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "KD")]
    assert driver.offset == 0 and driver.stats["frames_lost"] == 0
    assert not [h for h in rec.health("shoe-1") if "not checked" in h.reason]
