"""Device identity without a configured ``wire_id``: the driver learns the wire id of the
device that answers its first HELLO and keeps it in its state file. A port renumbered
after a reboot that now leads to another table's shoe is refused (degraded health that
says so), across driver restarts too, until an operator clears the learned id
(``studio drivers forget-device``); the replacement then continues past every seq
published, and what it dealt before is not published as this table's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from devices_rig import ScriptedShoe, run_base
from test_devices_robustness import recording, relink, shoe_config

from drivers.cli import forget_device
from drivers.runner import DriverSet
from hwsim.table import Simulator, wire_id
from studio.config import BrokerSettings


async def test_a_renumbered_port_leading_to_another_shoe_is_refused_until_forgotten(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    port = tmp_path / "ttyUSB0"
    state_dir = tmp_path / "state"
    config = shoe_config(table_id, port)  # no wire_id
    async with (
        ScriptedShoe(tmp_path / "a" / "shoe-1", device="SN-A") as ours,
        ScriptedShoe(tmp_path / "b" / "shoe-2", device="SN-B") as neighbour,
        recording(broker, table_id) as rec,
    ):
        for code in ("QH", "7C", "AS"):
            neighbour.card(code, "T2")  # the next table's shoe has dealt too
        relink(port, ours.port.link)
        async with DriverSet(config, broker=broker, state_dir=state_dir) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            for code in ("KS", "KH"):
                ours.card(code, "T1")
            await rec.wait(lambda: len(rec.cards) >= 2)
            assert driver.wire_id == "SN-A"
            ours.port.close()  # a reboot renumbers the ports: ours now leads to the neighbour
            relink(port, neighbour.port.link)
            wrong = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "wrong device on port" in h.reason]
            )
        saved = json.loads((state_dir / f"{table_id}__shoe-1.json").read_text())
        assert saved["wire_id"] == "SN-A"
        base = run_base(state_dir, table_id)
        assert wrong[-1].status == "degraded" and "'SN-B' answered, expected 'SN-A'" in (
            wrong[-1].reason
        )
        assert "forget-device" in wrong[-1].reason
        # A restarted driver still refuses it: the learned id is in the state file.
        async with DriverSet(config, broker=broker, state_dir=state_dir) as ds:
            driver = ds.get(table_id, "shoe-1")
            count = len(rec.health("shoe-1"))
            await rec.wait(
                lambda: [
                    h for h in rec.health("shoe-1")[count:] if "wrong device on port" in h.reason
                ]
            )
            assert not driver.online and [c.card for c in rec.cards] == ["KS", "KH"]
            # The operator replaced the shoe on purpose: the neighbour is now this table's.
            forget_device(table=table_id, device="shoe-1", state_dir=state_dir)
            await ds.wait_online(20)
            neighbour.card("9D", "T1")
            await rec.wait(lambda: len(rec.cards) >= 3)
            await rec.wait(lambda: [h for h in rec.health("shoe-1") if "replaced by" in h.reason])
            await asyncio.sleep(0.5)  # the neighbour's old cards, if published, show up now
            assert driver.wire_id == "SN-B"
    # Never the neighbour's three earlier cards; its new card past every seq published.
    assert [(c.seq - base, c.card) for c in rec.cards] == [(1, "KS"), (2, "KH"), (6, "9D")]


async def test_without_a_state_dir_the_learned_id_still_guards_reconnects(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    port = tmp_path / "ttyUSB0"
    async with (
        ScriptedShoe(tmp_path / "a" / "shoe-1", device="SN-A") as ours,
        ScriptedShoe(tmp_path / "b" / "shoe-2", device="SN-B") as neighbour,
        recording(broker, table_id) as rec,
    ):
        for code in ("QH", "7C", "AS", "2D"):
            neighbour.card(code, "T2")
        relink(port, ours.port.link)
        async with DriverSet(shoe_config(table_id, port), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            ours.card("KS", "T1")
            await rec.wait(lambda: len(rec.cards) >= 1)
            ours.port.close()
            relink(port, neighbour.port.link)
            await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "wrong device on port" in h.reason]
            )
            neighbour.card("5S", "T2")
            await asyncio.sleep(0.5)
            assert driver.offset == 0
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "KS")]


async def test_simulated_shoes_of_two_tables_are_told_apart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    other = f"{table_id}-b"
    port = tmp_path / "ttyUSB0"
    async with Simulator(
        [table_id, other], seed=3, base_dir=tmp_path, heartbeat_interval=0.1
    ) as sim:
        ours, theirs = sim.table(table_id), sim.table(other)
        relink(port, Path(ours.shoe.port))
        dealt_elsewhere = [c.code for _ in range(3) for c in theirs.deal()]
        async with (
            recording(broker, table_id) as rec,
            DriverSet(shoe_config(table_id, port), broker=broker) as ds,
        ):
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            dealt = [c.code for _ in range(3) for c in ours.deal()]
            await rec.wait(lambda: len(rec.cards) >= 3)
            assert driver.wire_id == f"SIM-{table_id}-shoe-1"
            await ours.shoe.unplug()  # a reboot renumbers the ports
            relink(port, Path(theirs.shoe.port))
            wrong = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "wrong device on port" in h.reason]
            )
            dealt_elsewhere += [c.code for _ in range(2) for c in theirs.deal()]
            await asyncio.sleep(0.5)
            assert not driver.online
    assert f"'SIM-{other}-shoe-1' answered" in wrong[-1].reason
    assert [c.card for c in rec.cards] == dealt and len(dealt_elsewhere) >= 5


async def test_a_device_replaced_while_the_driver_is_stopped_is_not_read_from_its_start(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    port = tmp_path / "ttyUSB0"
    state_dir = tmp_path / "state"
    config = shoe_config(table_id, port)
    async with (
        ScriptedShoe(tmp_path / "a" / "shoe-1", device="SN-A") as ours,
        ScriptedShoe(tmp_path / "b" / "shoe-2", device="SN-B") as spare,
        recording(broker, table_id) as rec,
    ):
        for code in ("QH", "7C", "AS"):
            spare.card(code, "T2")  # the spare dealt elsewhere (more than ours has)
        relink(port, ours.port.link)
        async with DriverSet(config, broker=broker, state_dir=state_dir) as ds:
            await ds.wait_online(20)
            for code in ("KS", "KH"):
                ours.card(code, "T1")
            await rec.wait(lambda: len(rec.cards) >= 2)
            await asyncio.sleep(0.3)  # acknowledged and saved
        base = run_base(state_dir, table_id)
        relink(port, spare.port.link)  # the shoe swapped for the spare, the driver stopped
        forget_device(table=table_id, device="shoe-1", state_dir=state_dir)
        async with DriverSet(config, broker=broker, state_dir=state_dir) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            spare.card("9D", "T1")
            await rec.wait(lambda: len(rec.cards) >= 3)
            await asyncio.sleep(0.5)  # the spare's old cards, if published, show up now
            assert driver.wire_id == "SN-B"
    # Before: seq 2 of the spare was another event than the one published, taken for a
    # reset, and the spare's earlier cards of another table published as this one's.
    assert [(c.seq - base, c.card) for c in rec.cards] == [(1, "KS"), (2, "KH"), (6, "9D")]


async def test_a_simulated_table_with_a_long_id_comes_online(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """An SDL/1 device id has at most 32 characters: ``SIM-{table}-shuffler-1`` passed it
    for a table id of 18 characters or more, and the driver refused every frame as
    malformed (a review). Such a device says a digest of its ids instead."""
    long_id = f"{table_id}-with-a-long-name"
    assert len(wire_id(long_id, "shuffler-1")) <= 32
    assert wire_id(long_id, "shuffler-1") != wire_id(long_id, "shoe-1")
    port = tmp_path / "ttyUSB0"
    async with Simulator([long_id], seed=3, base_dir=tmp_path, heartbeat_interval=0.1) as sim:
        relink(port, Path(sim.table(long_id).shoe.port))
        async with (
            recording(broker, long_id) as rec,
            DriverSet(shoe_config(long_id, port), broker=broker) as ds,
        ):
            await ds.wait_online(20)
            dealt = [c.code for _ in range(2) for c in sim.table(long_id).deal()]
            await rec.wait(lambda: len(rec.cards) >= 2)
            assert ds.get(long_id, "shoe-1").wire_id == wire_id(long_id, "shoe-1")
    assert [c.card for c in rec.cards] == dealt
