"""Frames held beyond a gap when the link drops belong to the old numbering if the device
was reset while away (a review of 8cf10c0).

A card is lost on the line, the next one is held beyond the gap, the RESEND goes unanswered
and the link drops before a heartbeat vouches for the held card. While unplugged the shoe is
power-cycled and deals fewer cards than the held seq, at least as many as it stood behind:
the reconnect's HELLO is below the held seq. Taken for a forged claim, the held card (a card
the shoe dealt) was dropped without a word. It is kept until the check of the last published
event decides: a reset publishes it as the old numbering's; no check at all, a reset too."""

from __future__ import annotations

from pathlib import Path

from devices_rig import Recorder, ScriptedShoe, deal_first_three
from test_devices_pending_checks import once_each, until
from test_devices_robustness import online_shoe

from drivers.device import DeviceDriver
from studio.config import BrokerSettings


async def hold_then_power_cycle(shoe: ScriptedShoe, rec: Recorder, driver: DeviceDriver) -> None:
    """QH 7C AS published; 2D (seq 4) lost on the line, KS (seq 5) held; unplugged before a
    heartbeat; power-cycled and four new cards dealt (count 4) while away."""
    await deal_first_three(shoe, rec)
    shoe.heartbeats = False
    shoe.ignore_resends = 100  # the RESEND for seq 4 is never answered on this link
    shoe.card("2D", send=False)
    shoe.card("KS")
    await until(lambda: 5 in driver._held)
    shoe.port.close()
    shoe.restart()
    for code in ("4H", "2C", "5D", "9S"):
        shoe.card(code, "S2", send=False)
    shoe.ignore_resends = 0


async def test_a_card_held_at_an_unplug_goes_out_when_the_check_shows_a_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await hold_then_power_cycle(shoe, rec, driver)
        shoe.port.open()
        shoe.heartbeats = True
        await rec.wait(lambda: "9S" in [c.card for c in rec.cards], timeout=10)
    cards = [(c.seq, c.card) for c in rec.cards]
    once_each(cards)
    # Before: KS dropped as "not the device's" (frames_beyond_count), then the reset.
    assert cards == [
        (1, "QH"),
        (2, "7C"),
        (3, "AS"),
        (5, "KS"),
        (7, "4H"),
        (8, "2C"),
        (9, "5D"),
        (10, "9S"),
    ]
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [6]
    assert driver.stats["frames_beyond_count"] == 0


async def test_a_card_held_at_an_unplug_goes_out_when_no_check_can_be_made(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The same, but the power-cycled shoe no longer has seqs 1-3 (the check's seq 3): the
    HELLO below the held seq is a reset, not the same numbering's count."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await hold_then_power_cycle(shoe, rec, driver)
        for seq in (1, 2, 3):
            del shoe.sent[seq]
        shoe.port.open()
        shoe.heartbeats = True
        await rec.wait(lambda: "9S" in [c.card for c in rec.cards], timeout=10)
    cards = [(c.seq, c.card) for c in rec.cards]
    once_each(cards)
    # Before: KS dropped, and the new numbering's 9S went out as the old one's seq 4, no reset.
    assert cards == [(1, "QH"), (2, "7C"), (3, "AS"), (5, "KS"), (10, "9S")]
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [6]
