"""A gap the driver asked the device to fill, while the device says nothing at all (a USB
hiccup, a device busy for a second): silence is no answer. The gap may be given up only
once the device, talking, had ``gap_timeout`` to fill it; before, a pause longer than
``gap_timeout`` (1 s) but shorter than the heartbeat timeout reported cards lost that the
device still had and would have sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_devices_robustness import lost_report, online_shoe, until

from studio.config import BrokerSettings


async def test_a_gap_open_while_the_device_is_silent_is_asked_again_not_given_up(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        shoe.card("QH")
        await rec.wait(lambda: rec.cards)
        # The shoe stalls: no heartbeat, no answer, for 0.8 s (past the gap timeout,
        # short of the 1.5 s heartbeat timeout: the link is not declared dead).
        shoe.heartbeats = False
        shoe.answer_resend = False
        shoe.card("7C", send=False)  # lost on the line
        shoe.card("AS")  # arrives: a gap, the driver asks for 2
        await until(lambda: driver.stats["resend_requests"] >= 1)
        await asyncio.sleep(0.8)
        shoe.answer_resend = True
        shoe.heartbeats = True  # awake again, 7C still in its buffer
        cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
        await asyncio.sleep(0.3)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS")]
    assert driver.stats["frames_lost"] == 0 and not lost_report(rec)
    assert driver.stats["disconnects"] == 0


async def test_a_talking_device_that_does_not_fill_the_gap_still_has_it_given_up(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, _driver):
        shoe.answer_resend = False  # heartbeats go on; the resend never comes
        shoe.card("QH")
        shoe.card("7C", send=False)
        shoe.card("AS")
        report = await rec.wait(lambda: lost_report(rec))
        cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
    assert "device seq 2..2 lost" in report[0].reason
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (3, "AS")]


async def test_a_resend_the_device_never_answered_is_asked_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # The RESEND is lost on the line (or ignored by a device muted for a moment) while the
    # heartbeats go on: no ACK came, so the request, not the device's buffer, failed.
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.3) as (shoe, rec, driver):
        shoe.ignore_resends = 1
        shoe.card("QH")
        shoe.card("7C", send=False)
        shoe.card("AS")
        cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS")]
    assert driver.stats["frames_lost"] == 0 and driver.stats["resend_requests"] == 2
