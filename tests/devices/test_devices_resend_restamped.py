"""A device that re-encodes the events it resends with its clock's time then, instead of
resending the stored frames unchanged (docs/devices.md 1.4): each resent event came under a
published seq with another device time, was taken for another event (a numbering restart),
and the restart's confirming RESEND was answered re-stamped again. The driver published the
whole buffer again and again under new seqs, hundreds of times (a docs-only device review).
The same type and fields under a published seq are the same event: a duplicate, and the
health stream says once that the device re-stamps."""

from __future__ import annotations

from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe

from studio.config import BrokerSettings

RESTAMP = "resends its events with a new time"


async def test_a_late_frame_after_a_restamped_resend_is_a_duplicate(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.restamp_resends = True
        await deal_first_three(shoe, rec)
        late = shoe.card("2D", send=False)  # overtaken on the line by the next one
        shoe.card("9H")  # held; the RESEND from 4 is answered re-stamped
        # Its count, before the answer: 9H goes out once 2D is in, before its re-stamped
        # copy comes (compared with the published one, not with the held one).
        shoe.port.write(shoe.frame(shoe.seq, "HB", "OK"))
        await rec.wait(lambda: len(rec.cards) >= 5)
        shoe.port.write(late)  # the overtaken frame, with its original time
        shoe.card("KC")
        cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
        reports = await rec.wait(lambda: [h for h in rec.health("shoe-1") if RESTAMP in h.reason])
        shoe.card("5S")  # and the driver goes on as before
        cards = await rec.wait(lambda: len(rec.cards) >= 7 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [
        (1, "QH"),
        (2, "7C"),
        (3, "AS"),
        (4, "2D"),
        (5, "9H"),
        (6, "KC"),
        (7, "5S"),
    ]
    assert driver.offset == 0
    assert driver.stats["resets_suspected"] == 0
    assert reports[0].status == "degraded"
    assert not [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]


async def test_a_reconnect_check_answered_restamped_keeps_the_numbering(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.restamp_resends = True
        await deal_first_three(shoe, rec)
        shoe.port.close()  # unplugged and plugged in again: the driver checks its last events
        shoe.card("2D", send=False)  # dealt meanwhile: fetched re-stamped
        shoe.port.open()
        await rec.wait(lambda: len(rec.cards) >= 4)
        shoe.card("KC")
        cards = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards)
        await rec.wait(lambda: [h for h in rec.health("shoe-1") if RESTAMP in h.reason])
        shoe.port.close()  # a second reconnect: said once
        shoe.port.open()
        shoe.card("5S")
        cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [
        (1, "QH"),
        (2, "7C"),
        (3, "AS"),
        (4, "2D"),
        (5, "KC"),
        (6, "5S"),
    ]
    assert driver.offset == 0
    assert not rec.events(rec.topics.shoe_events, "numbering_reset")
    said = [h for h in rec.health("shoe-1") if RESTAMP in h.reason]
    assert len(said) == 1


async def test_a_restart_whose_new_events_repeat_the_old_ones_is_still_told(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The other side of it: a shoe restarted on a live link whose first new events are, by
    chance, the same type and fields under the same seqs (the shoe in it loaded again, an
    8-deck shoe's second QH) reads as a resend of them until its count says it restarted;
    then they are fetched again and published after the offset, none lost."""
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.event("SHOE", "S1", "8")
        for code in ("QH", "7C", "AS"):
            shoe.card(code)
        await rec.wait(lambda: len(rec.cards) >= 3)
        shoe.restart()  # no heartbeat between: the two events come first
        shoe.event("SHOE", "S1", "8")  # seq 1 again, the same event but for its time
        shoe.card("QH")  # seq 2 again, the same card
        # Its heartbeats now say 2, below the 4 published: a restart, confirmed by HELLO.
        await rec.wait(lambda: len(rec.cards) >= 4)
        shoe.card("9S")
        cards = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards)
        loaded = await rec.wait(
            lambda: (
                len(rec.events(rec.topics.shoe_events, "shoe_loaded")) >= 2
                and rec.events(rec.topics.shoe_events, "shoe_loaded")
            )
        )
        await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
        )
    assert [(c.seq, c.card) for c in cards] == [
        (2, "QH"),
        (3, "7C"),
        (4, "AS"),
        (6, "QH"),
        (7, "9S"),
    ]
    assert [e.seq for e in loaded] == [1, 5]
    assert driver.offset == 4
    assert not [h for h in rec.health("shoe-1") if RESTAMP in h.reason]
