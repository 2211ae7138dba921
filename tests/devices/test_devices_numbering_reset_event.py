"""A device that restarted its numbering while the link or the driver was away: the driver
publishes a ``numbering_reset`` device event on the device's events topic.

A review: the cards a shoe dealt under its old numbering after the link dropped (or the
driver stopped) and before its power cycle are gone, and the bus seqs stayed contiguous;
only a health report said "device restarted its numbering at N", which no rule acts on.
The event takes the next bus seq (the new numbering's events follow it, contiguous), so
the controller can raise an alert for it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three, run_base
from test_devices_robustness import recording, shoe_config

from drivers.device import NUMBERING_RESET
from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_reset_while_the_link_was_down_is_published_as_an_event(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            await deal_first_three(shoe, rec)
            shoe.port.close()  # unplugged
            shoe.restart()  # power-cycled meanwhile
            shoe.card("KD", send=False)  # its new seq 1
            shoe.port.open()
            events = await rec.wait(lambda: rec.events(rec.topics.shoe_events, NUMBERING_RESET))
            await rec.wait(lambda: len(rec.cards) >= 4)
            await asyncio.sleep(0.5)
    # Before: no event at all (a health report only), KD went out as seq 4.
    (event,) = events
    assert event.device == "shoe-1" and event.seq == 4
    assert event.data == {
        "last_seen": 3,
        "last_bus_seq": 3,
        "count": 1,
        "reason": "device restarted its numbering at 1",
    }
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (5, "KD")]
    assert rec.events(rec.topics.shoe_events, NUMBERING_RESET) == [event]  # once
    assert driver.offset == 4 and driver.stats["numbering_resets_announced"] == 1


async def test_a_reset_while_the_driver_was_stopped_is_published_as_an_event(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    config = shoe_config(table_id, (tmp_path / "shoe-1"))
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            await ds.wait_online(20)
            await deal_first_three(shoe, rec)
            await asyncio.sleep(0.5)  # acknowledged and saved
        base = run_base(state, table_id)
        shoe.restart()  # power-cycled while no driver ran
        shoe.card("KD", send=False)
        shoe.card("9S", send=False)
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            events = await rec.wait(lambda: rec.events(rec.topics.shoe_events, NUMBERING_RESET))
            await rec.wait(lambda: len(rec.cards) >= 5)
            await asyncio.sleep(0.5)
    (event,) = events
    assert event.seq == base + 4
    assert event.data["last_seen"] == 3 and event.data["last_bus_seq"] == base + 3
    assert event.data["count"] == 2
    assert [(c.seq - base, c.card) for c in rec.cards] == [
        (1, "QH"), (2, "7C"), (3, "AS"), (5, "KD"), (6, "9S"),
    ]  # fmt: skip
