"""What arrives before the HELLO answer is older than it. A heartbeat the device sent just
before a card, both ahead of its HELLO answer, carries a seq below the answer's: taken
after the answer, it looked like a device that restarted its numbering, and the driver
moved its offset and fetched the device's whole buffer again (every card re-published
under new seqs) or reported frames lost that were not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe
from test_devices_robustness import lost_report, online_shoe, recording, shoe_config

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_heartbeat_before_the_hello_answer_is_no_reset(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.card("QH")
        shoe.card("7C")
        await rec.wait(lambda: len(rec.cards) >= 2)
        shoe.port.close()  # unplugged and plugged in again
        shoe.beat_then_hello = [("CARD", "AS", "S1")]  # dealt as the driver reconnects
        shoe.port.open()
        await rec.wait(lambda: len(rec.cards) >= 3)
        shoe.card("2D")
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
        await asyncio.sleep(0.5)  # a re-publish of the buffer would show up now
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
    assert cards == rec.cards
    assert driver.offset == 0 and driver.stats["frames_lost"] == 0
    assert not [h for h in rec.health("shoe-1") if "restarted" in h.reason]
    assert not lost_report(rec)


async def test_the_same_on_first_contact(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        shoe.card("QH", send=False)  # dealt before any driver ran
        shoe.beat_then_hello = [("CARD", "7C", "S1")]
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            shoe.card("AS")
            await rec.wait(lambda: rec.cards)
            await asyncio.sleep(0.5)
    # First contact continues from the HELLO's seq (2): only AS is new.
    assert [(c.seq, c.card) for c in rec.cards] == [(3, "AS")]
    assert driver.offset == 0 and driver.stats["frames_lost"] == 0
    assert not [h for h in rec.health("shoe-1") if "restarted" in h.reason]
