"""ACME-STX card frames name no shoe: the shoe driver stamps each card with the last load it
published, keeps that id in its state file across a restart, and forgets it where the shoe
may have changed unseen (emptied, the device reset). A real pty and a real broker."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from acme_support import acme_config, acme_line
from devices_rig import Recorder, run_base
from test_devices_vendor_codec import FakeAcmeShoe

from drivers.codecs.acme_stx_shoe import encode_stx
from drivers.runner import DriverSet
from drivers.shoe import ShoeDriver
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.contract import UNKNOWN_SHOE


def acme_settings(port: Path) -> DeviceSettings:
    return DeviceSettings(
        id="shoe-1", kind="shoe", port=str(port), heartbeat_timeout=2.0,
        options={"protocol": "acme-stx-shoe"},
    )  # fmt: skip


@asynccontextmanager
async def acme_shoe(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> AsyncIterator[tuple[FakeAcmeShoe, Recorder]]:
    """The shoe on its line (acme_support.acme_line: its heartbeats' end awaited); the
    drivers are each test's own (restarted over a state dir, say)."""
    device = FakeAcmeShoe(tmp_path / "acme")
    async with acme_line(device, broker, table_id) as rec:
        yield device, rec


def power_cycle(device: FakeAcmeShoe) -> None:
    """Off and on: the device numbers from 1 again, its resend buffer empty."""
    device.port.close()
    device.seq, device.sent = 0, []


def stamped(rec: Recorder, base: int = 0) -> list[tuple[int, str, str]]:
    """(seq relative to ``base``, card, shoe) of each card published."""
    return [(c.seq - base, c.card, c.shoe) for c in rec.cards]


async def test_a_driver_restarted_mid_shoe_stamps_the_shoe_loaded_before(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            device.event("S", "8ACME-9")
            device.event("C", "AS")
            await rec.wait(lambda: len(rec.cards) >= 1)
        base = run_base(state, table_id)
        device.event("C", "TD")  # dealt while no driver ran
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            device.event("C", "7C")
            await rec.wait(lambda: len(rec.cards) >= 3)
    saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
    # Before: the restarted driver had forgotten the load, and TD and 7C went out 'unknown',
    # which the controller does not check against the shoe in play.
    assert stamped(rec, base) == [(2, "AS", "ACME-9"), (3, "TD", "ACME-9"), (4, "7C", "ACME-9")]
    assert (saved["shoe"], saved["shoe_seq"] - base) == ("ACME-9", 1)


async def test_a_state_file_without_the_shoe_still_loads(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    old = {"last_device_seq": 2, "offset": 0, "published": 2, "check": None, "wire_id": "acme"}
    (state / f"{table_id}__shoe-1.json").write_text(json.dumps(old))
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        device.sent = [encode_stx(1, "S", "8ACME-9"), encode_stx(2, "C", "AS")]
        device.seq = 2  # published by the driver that wrote the file
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            device.event("C", "TD")
            device.event("S", "6ACME-10")
            device.event("C", "9S")
            await rec.wait(lambda: len(rec.cards) >= 2)
    # The numbering goes on from the file; no load saved, so 'unknown' until the next one.
    assert stamped(rec) == [(3, "TD", UNKNOWN_SHOE), (5, "9S", "ACME-10")]


async def test_after_a_power_cycle_while_the_driver_was_down_the_saved_shoe_is_not_trusted(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            device.event("S", "8ACME-9")
            device.event("C", "AS")
            await rec.wait(lambda: len(rec.cards) >= 1)
        base = run_base(state, table_id)
        power_cycle(device)
        device.event("C", "KD")  # maybe of another shoe: its load, if any, is not buffered
        device.port.open()
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            await rec.wait(lambda: len(rec.cards) >= 2)
            device.event("S", "6ACME-10")
            device.event("C", "9S")
            await rec.wait(lambda: len(rec.cards) >= 3)
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "no longer taken as loaded" in h.reason]
            )
    assert stamped(rec, base) == [  # (3: the numbering_reset event)
        (2, "AS", "ACME-9"),
        (4, "KD", UNKNOWN_SHOE),
        (6, "9S", "ACME-10"),
    ]
    assert report[0].status == "degraded" and "restarted its numbering" in report[0].reason


async def test_a_power_cycle_seen_on_reconnect_forgets_the_shoe(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            device.event("S", "8ACME-9")
            device.event("C", "AS")
            await rec.wait(lambda: len(rec.cards) >= 1)
            power_cycle(device)
            device.event("C", "KD")
            device.port.open()
            await rec.wait(lambda: len(rec.cards) >= 2)
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "no longer taken as loaded" in h.reason]
            )
    # Before: the codec kept the old load across the reconnect and KD went out as ACME-9's.
    # (3: the numbering_reset event published at the reconnect.)
    assert stamped(rec) == [(2, "AS", "ACME-9"), (4, "KD", UNKNOWN_SHOE)]
    assert report[0].status == "degraded"
    assert "shoe 'ACME-9' no longer taken as loaded" in report[0].reason


async def test_an_emptied_shoe_is_no_longer_stamped(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            device.event("S", "8ACME-9")
            device.event("C", "AS")
            device.event("E")
            device.event("C", "2H")  # no load since the shoe ran empty
            await rec.wait(lambda: len(rec.cards) >= 2)
    assert stamped(rec) == [(2, "AS", "ACME-9"), (4, "2H", UNKNOWN_SHOE)]


async def test_a_card_behind_a_lost_load_frame_takes_that_load(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    config = acme_config(table_id, tmp_path / "acme")
    async with acme_shoe(broker, table_id, tmp_path) as (device, rec):
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            device.seq += 1
            load = encode_stx(device.seq, "S", "8ACME-9")
            device.sent.append(load)
            device.port.write(load[:-1] + bytes([load[-1] ^ 0x55]))  # LRC fails: resent
            device.event("C", "AS")
            await rec.wait(lambda: len(rec.cards) >= 1)
    # Before: the card was stamped as it was decoded, ahead of the load fetched again.
    assert stamped(rec) == [(2, "AS", "ACME-9")]


def test_a_load_not_acknowledged_before_the_stop_is_not_restored(tmp_path: Path) -> None:
    """It is fetched again after the restart; the cards before it are the shoe before's."""
    broker = BrokerSettings(url="mqtt://127.0.0.1:1883")
    driver = ShoeDriver("t1", acme_settings(tmp_path / "acme"), broker)
    driver.restore_state_fields({"shoe": "ACME-9", "shoe_seq": 5}, resume_after=4)
    assert driver.loaded_shoe is None
    driver.restore_state_fields({"shoe": "ACME-9", "shoe_seq": 5}, resume_after=5)
    assert driver.loaded_shoe == "ACME-9"
    assert driver.state_fields() == {"shoe": "ACME-9", "shoe_seq": 5}
