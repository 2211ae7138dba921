"""A reset soon after the driver's first contact, before it has published anything and with
no saved state: the driver continued from the device's count but knew no event of it, so a
device reset while the link was down that dealt as many events as before looked like the
same numbering, and its first new events were skipped without a word. The driver now
fetches the device's last event at first contact (not publishing it) as its reference."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe
from test_devices_robustness import recording, shoe_config

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_reset_while_unplugged_right_after_first_contact_is_seen(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        for code in ("QH", "7C", "AS"):
            shoe.card(code, send=False)  # dealt before any driver ran (no state)
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            await asyncio.sleep(0.3)
            shoe.port.close()  # unplugged before anything is published
            shoe.restart()  # and power-cycled meanwhile
            shoe.event("SHOE", "S2", "8", send=False)
            shoe.card("KD", "S2", send=False)
            shoe.card("9S", "S2", send=False)  # its HELLO says 4: not below the 3 at first contact
            shoe.card("4H", "S2", send=False)
            shoe.port.open()
            cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
            loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
            await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
            )
            await asyncio.sleep(0.3)
    # Before: HELLO 4 >= 3, RESEND from 4: only 4H published (as seq 4), SHOE, KD, 9S lost.
    # (Seq 4 is the numbering_reset event published at the reconnect.)
    assert [(c.seq, c.card) for c in rec.cards] == [(6, "KD"), (7, "9S"), (8, "4H")]
    assert cards == rec.cards and [e.seq for e in loaded] == [5]
    assert driver.offset == 4
    (reset,) = rec.events(rec.topics.shoe_events, "numbering_reset")
    assert reset.seq == 4 and reset.data["last_seen"] == 3


async def test_first_contact_publishes_what_follows_and_not_the_reference(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        for code in ("QH", "7C"):
            shoe.card(code, send=False)
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            shoe.card("KD")
            shoe.card("9S")
            await rec.wait(lambda: len(rec.cards) >= 2)
            await asyncio.sleep(0.3)
    assert [(c.seq, c.card) for c in rec.cards] == [(3, "KD"), (4, "9S")]
    assert driver.offset == 0 and driver.stats["frames_lost"] == 0
    assert driver.stats["duplicates"] == 0
