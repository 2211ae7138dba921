"""A card is published once, and only a card the device dealt (a fuzzing review).

1. While a numbering check is pending (``_verify`` after a reconnect, ``_learn`` at first
   contact), events above its seq are held until it resolves: a heartbeat vouches for seqs,
   not for the numbering. Released on a heartbeat, a card went out, then out again under
   another seq once the check's frame (garbled on the line the first time) came back and
   showed that the device had restarted its numbering while unplugged.
2. A reset claimed by one frame (a corrupted frame passes the 16-bit checksum about once in
   65,536) is not acted on while the device keeps talking at its unchanged count without
   confirming it: the RESEND is asked again, up to RESEND_TRIES times, then the claim is
   ignored. Acted on after gap_timeout, the claiming frame went out as a card never dealt
   and the device's buffer again under new seqs. A silent device is reconnected and its
   HELLO decides; the claiming frame is published only if the device sends it again."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from devices_rig import Recorder, ScriptedShoe, deal_first_three
from test_devices_first_contact_unfetched import ClockShoe
from test_devices_robustness import online_shoe, recording, shoe_config

from drivers.device import RESEND_TRIES
from drivers.runner import DriverSet
from studio.config import BrokerSettings


def garble_next_resend(shoe: ScriptedShoe) -> None:
    """The first card frame of the shoe's next RESEND answer is garbled on the line (its
    checksum fails): the driver gets the ACK and the frames after it, not that one."""
    on_host = shoe.port.on_data
    write = shoe.port.write

    def garbled(out: bytes) -> None:
        if b"CARD" in out:
            shoe.port.write = write  # type: ignore[method-assign]
            raw = bytearray(out)
            raw[raw.index(b"CARD") + 6] ^= 0x10
            out = bytes(raw)
        write(out)

    def garbling(data: bytes) -> None:
        if b"RESEND" in data:
            shoe.port.on_data = on_host
            shoe.port.write = garbled  # type: ignore[method-assign]
        on_host(data)

    shoe.port.on_data = garbling


def once_each(cards: list[tuple[int, str]]) -> None:
    twice = [card for card, n in Counter(card for _, card in cards).items() if n > 1]
    assert not twice, f"published twice: {twice} in {cards}"


async def test_a_heartbeat_does_not_release_cards_held_behind_a_reconnect_check(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.close()  # unplugged
        shoe.restart()  # power-cycled while away, and as many cards dealt again
        for code in ("KD", "9S", "4H"):
            shoe.card(code, "S2", send=False)
        garble_next_resend(shoe)  # the check frame (seq 3: 4H) garbled on the line
        shoe.port.open()
        await asyncio.sleep(0.15)  # the HELLO answered, the check RESEND too (garbled)
        shoe.card("2C", "S2")  # dealt live: seq 4; heartbeats at 4 follow
        await asyncio.sleep(1.0)
        shoe.card("5D", "S2")
        await rec.wait(lambda: len(rec.cards) >= 8, timeout=10)
        await asyncio.sleep(0.5)  # a card published again would show up now
    cards = [(c.seq, c.card) for c in rec.cards]
    once_each(cards)
    # Before: 2C went out as bus seq 4 on the heartbeat, then again as 9 once the check
    # (asked again by the next card) showed the reset.
    assert cards == [
        (1, "QH"), (2, "7C"), (3, "AS"), (5, "KD"), (6, "9S"), (7, "4H"), (8, "2C"), (9, "5D"),
    ]  # fmt: skip
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [4]
    assert driver.offset == 4


async def test_cards_after_an_unfetched_first_contact_reference_wait_for_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    shoe = ClockShoe(tmp_path / "shoe-1")
    config = shoe_config(table_id, shoe.port.link, gap_timeout=0.3)
    async with shoe, recording(broker, table_id) as rec, DriverSet(config, broker=broker) as ds:
        for code in ("QH", "7C", "AS"):
            shoe.card(code, send=False)  # dealt before any driver ran (no state)
        shoe.answer_resend = False  # the reference (seq 3) does not come on this connection
        driver = ds.get(table_id, "shoe-1")
        await ds.wait_online(20)
        assert driver._learn == 3
        shoe.port.close()  # unplugged before the reference came
        shoe.restart()  # power-cycled meanwhile (a minute later by its clock)
        shoe.later_ms = 60_000
        for code in ("KD", "9S", "4H", "2C"):  # HELLO says 4
            shoe.card(code, "S2", send=False)
        shoe.answer_resend = True
        garble_next_resend(shoe)  # the reference (seq 3: 4H) garbled; 2C (seq 4) comes
        shoe.port.open()
        with contextlib.suppress(TimeoutError):  # (before, they never all came)
            await rec.wait(lambda: len(rec.cards) >= 4, timeout=5)
        await asyncio.sleep(0.5)
    cards = [(c.seq, c.card) for c in rec.cards]
    once_each(cards)
    # Before: 2C went out as bus seq 4 at once, the check was then given up (its RESEND had
    # been ACKed) and KD, 9S, 4H were lost without a word (or, asked again later, every card
    # of the new numbering went out after an offset: 2C twice).
    assert cards == [(5, "KD"), (6, "9S"), (7, "4H"), (8, "2C")]
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [4]


async def until_reported(rec: Recorder, predicate: Callable[[str], bool]) -> None:
    await rec.wait(lambda: [h for h in rec.health("shoe-1") if predicate(h.reason)], timeout=10)


async def test_a_reset_claim_the_device_never_answers_while_it_talks_is_ignored(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.ignore_resends = RESEND_TRIES  # every RESEND (or its answer) lost on the line
        started = time.monotonic()
        shoe.port.write(shoe.frame(2, "CARD", "KS", "S1"))  # corrupted, a valid checksum
        # (Before: "... (no second frame to confirm it in time)", after gap_timeout.)
        await until_reported(rec, lambda reason: "no answer to" in reason or "second" in reason)
        waited = time.monotonic() - started
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(0.5)  # a re-publish under new seqs would show up now
    # Before: after gap_timeout the reset was acted on: KS published, then the shoe's
    # buffer again under new seqs, though its heartbeats said 3 all along.
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["resets_refuted"] == 1
    assert driver.stats["reset_checks_repeated"] == RESEND_TRIES - 1
    assert waited >= RESEND_TRIES * 0.3 - 0.05, waited


async def test_a_reset_claim_is_asked_again_and_the_answer_refutes_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.ignore_resends = 1  # the first RESEND lost; the second answered (7C at seq 2)
        shoe.port.write(shoe.frame(2, "CARD", "KS", "S1"))
        await until_reported(rec, lambda reason: "not confirmed" in reason or "restarted" in reason)
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(0.3)
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["reset_checks_repeated"] == 1


async def test_a_hello_at_the_unchanged_count_below_a_forged_seq_is_no_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """Two corrupted frames: a card claiming seq 10 (held beyond a gap) and a heartbeat
    claiming count 1. The device's next count, 3, is below the claimed 10 but not below what
    it stood behind: no reset (it confirmed one, and the held forged card went out)."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(10, "CARD", "KS", "S1") + shoe.frame(1, "HB", "OK"))
        await until_reported(
            rec, lambda reason: "claimed by one frame" in reason or "restarted" in reason
        )
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(0.5)
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["resets_refuted"] == 1
    assert driver.stats["frames_beyond_count"] == 1


async def test_a_silent_device_after_a_reset_claim_is_decided_by_its_reconnect_hello(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        shoe.answer_resend = False  # silent: nothing confirms the claim on this link
        shoe.restart()
        shoe.card("KD", "S2")  # seq 1 again, another card
        await asyncio.sleep(0.9)  # 3 x gap_timeout: acted on after the first, before
        assert len(rec.cards) == 3 and driver.offset == 0
        shoe.answer_resend = True  # the reconnect (heartbeat timeout) asks again
        await rec.wait(lambda: len(rec.cards) >= 4, timeout=10)
        shoe.heartbeats = True
        await asyncio.sleep(0.3)
    # The reconnect's HELLO (count 1) tells the reset; KD, sent again, follows the
    # numbering_reset event (bus seq 4).
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (5, "KD")]
    assert [e.seq for e in rec.events(rec.topics.shoe_events, "numbering_reset")] == [4]


async def test_a_reconnect_hello_below_a_forged_seq_but_at_the_count_is_no_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """One corrupted card frame claiming seq 1000 is held beyond a gap when the link drops;
    the reconnect's HELLO (4) is below it but at or above all the device stood behind."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False  # no count on this link says the claim is not the device's
        shoe.port.write(shoe.frame(1000, "CARD", "KS", "S1"))
        await asyncio.sleep(0.1)
        assert 1000 in driver._held
        shoe.port.close()  # unplugged
        shoe.card("2D", send=False)  # dealt while away
        shoe.port.open()
        shoe.heartbeats = True
        await rec.wait(lambda: len(rec.cards) >= 4, timeout=10)
        await asyncio.sleep(0.5)
    # Before: taken for a reset, KS went out (bus seq 1000), then a numbering_reset and the
    # shoe's whole buffer again under new seqs.
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["frames_beyond_count"] == 1


async def test_what_was_held_before_a_reconnect_with_nothing_to_check_is_fetched_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A reset on a live link, confirmed; one new card (seq 2) held behind a gap when the
    link drops, none published; the shoe resets again while away and deals three cards.
    Nothing of the new numbering was published, so nothing tells the second reset: the held
    card must not go out among the newest numbering's (its seq 2 then came again as a live
    reset, and the newest cards went out twice)."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        shoe.restart()
        shoe.port.write(shoe.frame(0, "HB", "OK"))  # the reset, confirmed by the HELLO answer
        await until(lambda: driver.offset == 3)
        shoe.ignore_resends = 100  # nothing of this numbering comes again on this link
        shoe.card("KD", "S2", send=False)
        shoe.card("9S", "S2")  # seq 2: held behind the gap
        await until(lambda: 2 in driver._held)
        shoe.port.close()
        shoe.restart()  # reset again while away
        for code in ("4H", "2C", "5D"):
            shoe.card(code, "S3", send=False)
        shoe.ignore_resends = 0
        shoe.port.open()
        shoe.heartbeats = True
        await rec.wait(lambda: len(rec.cards) >= 6, timeout=10)
        await asyncio.sleep(0.5)
    cards = [(c.seq, c.card) for c in rec.cards]
    once_each(cards)
    assert cards == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "4H"), (5, "2C"), (6, "5D")]


async def until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_a_second_reset_before_the_claimed_event_was_fetched_is_reported(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The frame that claimed a reset is not published, the device's own is fetched: if the
    device restarts its numbering again before that, the claim's cards are gone, not
    silently (a corrupted claim looks the same, and says the same)."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        shoe.ignore_resends = 2  # the claim's check and the new numbering's fetch
        shoe.restart()
        shoe.card("KD", "S2")  # seq 1 again: the claim
        await asyncio.sleep(0.05)
        shoe.port.write(shoe.frame(1, "HB", "OK"))  # below 3: the reset confirmed
        await until(lambda: driver.offset == 3)
        shoe.restart()  # and again, before KD was fetched
        shoe.card("4H", "S3")
        await until_reported(rec, lambda reason: "may have been missed" in reason)
        shoe.heartbeats = True
        await rec.wait(lambda: len(rec.cards) >= 4)
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "4H")]
    assert driver.stats["reset_claims_unmatched"] == 1
