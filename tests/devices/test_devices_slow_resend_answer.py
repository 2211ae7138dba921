"""A device that ACKs a RESEND at once but sends the frames a while later (a slow flash
read): the gap was given up ``gap_timeout`` after the ACK, and the card that then came was
dropped for good ("came after it was reported lost"), a permanent hole in the bus seqs,
though the same device without the ACK lost nothing (a docs-only device review). After an
ACK the device gets as long as an unanswered request (3 x ``gap_timeout``)."""

from __future__ import annotations

from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe

from studio.config import BrokerSettings


async def test_a_resend_acked_at_once_and_answered_late_loses_nothing(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=1.0) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.resend_delay = 1.5  # its frames 1.5 x gap_timeout after the ACK
        shoe.card("2D", send=False)  # 4: garbled on the line
        shoe.card("9H")  # 5: held, RESEND from 4: ACK, then 4 and 5 again 1.5 s later
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards))
        shoe.resend_delay = 0.0
        shoe.card("KC")
        cards = await rec.wait(lambda: any(c.card == "KC" for c in rec.cards) and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [
        (1, "QH"),
        (2, "7C"),
        (3, "AS"),
        (4, "2D"),
        (5, "9H"),
        (6, "KC"),
    ]
    assert driver.stats["frames_lost"] == 0
    assert driver.stats["late_after_lost"] == 0
    assert not [h for h in rec.health("shoe-1") if " lost" in h.reason]
