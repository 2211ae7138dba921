"""A driver with a ``state_dir`` whose state file is gone (a new host, a wiped disk, a state
dir elsewhere) while its device restarted its numbering (a power cycle): it cannot tell
which seqs consumers hold, so it numbers from the Unix time in ms at its first contact,
above every seq an earlier run can have reached. Before, it numbered from the device's
count again, and consumers dropped the new events as duplicates of the earlier run's.

The shoe is the scripted one (``ScriptedShoe``, a real pty); the broker is real."""

from __future__ import annotations

import time
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three, unix_ms_base
from test_devices_robustness import recording, shoe_config

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_driver_that_lost_its_state_numbers_above_every_earlier_seq(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
        earlier = [c.seq for c in rec.cards]
        (state / f"{table_id}__shoe-1.json").unlink()  # lost
        shoe.restart()  # and the shoe powered off and on: its numbering from 1 again
        before_start = int(time.time() * 1000)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            base = unix_ms_base(driver.offset)
            shoe.card("KD", "S2")
            shoe.card("9S", "S2")
            await rec.wait(lambda: len(rec.cards) >= 5)
    new = rec.cards[3:]
    assert [c.card for c in new] == ["KD", "9S"]
    # Before: KD and 9S went out as seqs 1 and 2, QH's and 7C's, dropped by every consumer.
    assert min(c.seq for c in new) > max(earlier)
    assert [c.seq - base for c in new] == [1, 2]  # the device's count on top of the base
    assert base >= before_start


async def test_a_driver_without_a_state_dir_keeps_the_device_count(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # Nothing is promised without state: the bus seq is the device's own.
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
            assert drivers.get(table_id, "shoe-1").offset == 0
    assert [c.seq for c in rec.cards] == [1, 2, 3]


async def test_the_base_is_saved_and_a_restart_continues_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
            base = unix_ms_base(drivers.get(table_id, "shoe-1").offset)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            shoe.card("KD")
            await rec.wait(lambda: len(rec.cards) >= 4)
            assert drivers.get(table_id, "shoe-1").offset == base
    assert [c.seq - base for c in rec.cards] == [1, 2, 3, 4]


async def test_what_a_driver_handed_to_the_bus_is_nothing_before_its_first_event(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """``DriverSet.published()`` (what a stop waits for a controller to have) names the
    events this process handed to the bus: before the first, 0. It gave the first contact's
    base (the Unix time in ms), no event at all, and a demo's stop waited 5 s for it, then
    warned "stopping before the controller received" (a review)."""
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            assert drivers.published() == [(table_id, "shoe-1", 0)]
            await deal_first_three(shoe, rec)
            assert drivers.published() == [(table_id, "shoe-1", rec.cards[-1].seq)]
