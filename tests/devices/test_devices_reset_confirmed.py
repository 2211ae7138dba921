"""A reset of the device's numbering is acted on (offset moved, the device's buffer fetched
again) only once a second, independent frame confirms it: a corrupted frame that passes
the 16-bit checksum (about 1 in 65,536) with a lower seq made the driver re-publish the
shoe's whole buffer under new seqs. A genuine reset is confirmed by the device's next
frames (or by asking it: RESEND of the seq, HELLO) within a round trip."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe

from studio.config import BrokerSettings


async def test_a_forged_event_under_a_published_seq_is_not_a_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(2, "CARD", "5H", "S1"))  # garbled, yet a valid checksum
        await asyncio.sleep(0.3)
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        report = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "not confirmed" in h.reason]
        )
        await asyncio.sleep(0.5)  # a re-publish under new seqs would show up now
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and report[0].status == "degraded"
    assert driver.stats["resets_refuted"] == 1


async def test_a_forged_heartbeat_with_a_lower_seq_is_not_a_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(1, "HB", "OK"))
        await asyncio.sleep(0.3)
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(0.5)
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert driver.offset == 0 and driver.stats["resets_refuted"] == 1


async def test_a_genuine_reset_with_one_new_event_is_confirmed_at_once(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False  # nothing but the event itself says the device reset
        shoe.restart()
        started = time.monotonic()
        shoe.card("KD", "S2")  # seq 1 again, another card
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
        delay = time.monotonic() - started
        shoe.heartbeats = True
        await asyncio.sleep(0.3)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "KD")]
    assert driver.offset == 3 and driver.stats["resets_refuted"] == 0
    print(f"reset confirmed and published in {delay * 1000:.0f} ms")
    assert delay < 0.5, delay  # confirmed by the device's resend, a round trip


async def test_an_unconfirmed_reset_waits_for_the_devices_hello_and_its_own_frame(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """Until 2026-12-06 an unconfirmed claim was acted on after gap_timeout and the
    claiming frame published: one the device never sent again may be a corrupted frame (a
    card never dealt). Now a silent device is reconnected and its HELLO decides; the claiming
    frame is not published unless the device sends it again (here it never does: lost)."""
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        shoe.answer_resend = False  # the device answers nothing: no second frame comes
        shoe.restart()
        shoe.card("KD", "S2")
        await asyncio.sleep(0.6)
        assert len(rec.cards) == 3 and driver.offset == 0  # not acted on after gap_timeout
        reset = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "numbering_reset"))
        shoe.heartbeats = True  # its count (1) stated: the unanswered RESEND is given up
        report = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "seq 1..1 lost" in h.reason]
        )
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS")]
    assert [e.seq for e in reset] == [4] and driver.offset == 4
    assert report[0].status == "degraded"
