"""``studio drivers forget-device`` while the driver runs. Both change the device's state
file (read, change, write): the driver its seqs on every publish and tick, the command the
learned wire id. Each now does it under the file's lock (``StateFile.locked``), and the
driver keeps a ``forgotten`` mark it finds there. Before, the driver's next save put the
forgotten id back (the replacement was then refused), and a save between the command's
read and write was undone by it (a restart lost the highest seq published)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from devices_rig import ScriptedShoe, run_base
from test_devices_robustness import recording, relink, shoe_config

from drivers.cli import forget_device
from drivers.runner import DriverSet
from drivers.state import StateFile, wire_id_fields
from studio.config import BrokerSettings


def state_of(state_dir: Path, table_id: str) -> StateFile:
    state = StateFile.of_device(state_dir, table_id, "shoe-1")
    assert state is not None
    return state


async def test_a_device_forgotten_while_its_driver_runs_stays_forgotten(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    port = tmp_path / "ttyUSB0"
    state_dir = tmp_path / "state"
    async with (
        ScriptedShoe(tmp_path / "a" / "shoe-1", device="SN-A") as ours,
        ScriptedShoe(tmp_path / "b" / "shoe-2", device="SN-B") as spare,
        recording(broker, table_id) as rec,
    ):
        for code in ("QH", "7C", "AS"):
            spare.card(code, "T2")  # the spare dealt elsewhere
        relink(port, ours.port.link)
        async with DriverSet(shoe_config(table_id, port), broker=broker, state_dir=state_dir) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            ours.card("KS", "T1")
            await rec.wait(lambda: len(rec.cards) >= 1)
            # The operator forgets the shoe before swapping it; it deals on meanwhile.
            forget_device(table=table_id, device="shoe-1", state_dir=state_dir)
            ours.card("KH", "T1")  # saved before it is published
            await rec.wait(lambda: len(rec.cards) >= 2)
            saved = json.loads(state_of(state_dir, table_id).path.read_text())
            base = run_base(state_dir, table_id)
            ours.port.close()
            relink(port, spare.port.link)
            await rec.wait(lambda: [h for h in rec.health("shoe-1") if "replaced by" in h.reason])
            spare.card("9D", "T1")
            await rec.wait(lambda: len(rec.cards) >= 3)
            await asyncio.sleep(0.5)  # the spare's old cards, if published, show up now
            assert driver.wire_id == "SN-B"
    # Before: the save for KH wrote "SN-A" back, and the spare was refused as a wrong device.
    assert (saved["wire_id"], saved.get("forgotten"), saved["published"]) == (None, "SN-A", 2)
    assert [(c.seq - base, c.card) for c in rec.cards] == [(1, "KS"), (2, "KH"), (6, "9D")]


async def test_a_driver_save_waits_for_forget_device_and_keeps_its_mark(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state_dir = tmp_path / "state"
    state = state_of(state_dir, table_id)
    async with ScriptedShoe(tmp_path / "shoe-1", device="SN-A") as shoe:
        config = shoe_config(table_id, shoe.port.link)
        async with (
            recording(broker, table_id) as rec,
            DriverSet(config, broker=broker, state_dir=state_dir) as ds,
        ):
            await ds.wait_online(20)
            shoe.card("KS")
            shoe.card("KH")
            await rec.wait(lambda: len(rec.cards) >= 2)
            with state.locked():  # forget-device, between its read and its write
                data = state.load()
                assert data is not None and data["published"] == 2
                shoe.card("AS")  # the driver saves (published 3) before it publishes
                await asyncio.sleep(0.5)
                published_meanwhile = len(rec.cards) - 2
                data["forgotten"], data["wire_id"] = data["wire_id"], None
                state.save(data)
            await rec.wait(lambda: len(rec.cards) >= 3)
            await asyncio.sleep(0.3)  # acknowledged and saved by the tick
            saved = state.load()
    # Before: the driver wrote at once, then the command's stale copy undid published 3
    # (or, the other way round, the driver's write dropped the mark).
    assert published_meanwhile == 0
    assert saved is not None
    assert (saved["wire_id"], saved.get("forgotten"), saved["published"]) == (None, "SN-A", 3)


async def test_forget_device_waits_for_a_driver_save_and_keeps_its_seqs(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    state = state_of(state_dir, "t1")
    before = {"last_device_seq": 2, "offset": 0, "published": 2, "check": [2, "f2"]}
    state.save({**before, "wire_id": "SN-A"})
    newer = {"last_device_seq": 3, "offset": 0, "published": 3, "check": [3, "f3"]}
    with state.locked():  # a driver's save, between its read and its write
        forgetting = asyncio.create_task(
            asyncio.to_thread(forget_device, table="t1", device="shoe-1", state_dir=state_dir)
        )
        done, _ = await asyncio.wait({forgetting}, timeout=0.5)
        state.save({**newer, "wire_id": "SN-A"})
    await forgetting
    # Before: the command wrote at once, and the driver's save then dropped its mark.
    assert not done
    assert state.load() == {**newer, "wire_id": None, "forgotten": "SN-A"}


def test_the_driver_writes_its_own_wire_id_only_once_it_learned_one() -> None:
    mark = {"wire_id": None, "forgotten": "SN-A"}
    # Still the device it had before the command: the mark stays.
    assert wire_id_fields("SN-A", "SN-A", mark) == mark
    # Learned the replacement since: its id, and the mark is spent.
    assert wire_id_fields("SN-B", None, mark) == {"wire_id": "SN-B"}
    assert wire_id_fields("SN-A", "SN-A", None) == {"wire_id": "SN-A"}
