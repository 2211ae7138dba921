"""The numbering check of an ACME-STX shoe compares several events, and looks past a wrap.

A fault-injection review (2026-12-06, docs/devices.md, *ACME-STX's seq wrap*): a shoe that
dealt past 999999 while unplugged was taken for a numbering restart at the small count its
HELLO stated, and the events it still held from before the wrap were never fetched; a shoe
power-cycled while unplugged whose new numbering reached the old one's last seq was told from
it by that one event's type and card (ACME frames carry no clock): when they agreed, the new
cards were dropped as duplicates. And on a live link, the event at the wrap (``000000``)
garbled on the line was never fetched: the next card was taken for a duplicate.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acme_support import acme_config, acme_line, acme_online
from devices_rig import Recorder, saved_state
from test_devices_acme_power_cycle import PowerCycledShoe

from drivers.codecs.acme_stx_shoe import encode_stx
from drivers.device import NUMBERING_RESET, RESEND_TRIES
from drivers.runner import DriverSet
from studio.config import BrokerSettings
from studio.contract import DeviceEvent, Topics

SETTLE = 10.0  # what a wait allows (a failing case fails in this, not in 20 s)


async def unplug(device: PowerCycledShoe, rec: Recorder) -> None:
    device.port.close()
    await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["offline"], SETTLE)


def resets(rec: Recorder, table_id: str) -> list[DeviceEvent]:
    return rec.events(Topics(table_id).shoe_events, NUMBERING_RESET)


async def test_a_wrap_while_unplugged_loses_none_of_the_events_before_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    dealt = ["QH", "7C"]  # 999992, 999993
    away = ["AS", "2D", "9H", "KS", "3C", "4D", "5H", "6S", "8C"]  # 999994 .. 1000002
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in dealt:
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        await unplug(device, rec)
        for code in away:  # the shoe deals on past 999999 while the cable is out
            device.event("C", code)
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
        announced = resets(rec, table_id)
    # Before: AS .. 5H (999994 .. 1000000) never fetched, announced as a numbering_reset.
    assert [c.card for c in cards] == dealt + away
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert not announced and stats["frames_lost"] == 0


async def test_a_power_cycled_shoe_whose_last_card_agrees_by_chance_is_a_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=0)
    async with acme_online(device, broker, table_id) as (rec, _):
        device.event("S", "8ACME-9")
        for code in ("QH", "7C", "AS"):  # seqs 2..4
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        await unplug(device, rec)
        device.power_cycle()  # numbering from 0 again, while unplugged
        device.event("S", "8ACME-10")
        for code in ("2D", "9H", "AS"):  # seq 4 is an AS again: the one event agrees
            device.event("C", code)
        device.port.open()
        await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["online"], SETTLE)
        device.event("C", "KD")  # seq 5
        await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = [(c.card, c.shoe) for c in rec.cards]
        bus_seqs = [c.seq for c in rec.cards]
        announced = resets(rec, table_id)
    # Before: seq 4 (AS) came back as published, the numbering taken for the old one: 2D, 9H
    # and AS dropped as duplicates, KD published as the old shoe's.
    assert cards == [
        ("QH", "ACME-9"), ("7C", "ACME-9"), ("AS", "ACME-9"),
        ("2D", "ACME-10"), ("9H", "ACME-10"), ("AS", "ACME-10"), ("KD", "ACME-10"),
    ]  # fmt: skip
    assert bus_seqs == sorted(set(bus_seqs))
    assert len(announced) == 1


async def test_the_event_at_the_wrap_garbled_on_a_live_link_is_fetched(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=999_996)
    device.event("S", "8ACME-9", send=False)  # 999997: the reference at first contact
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C"):  # 999998, 999999
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        device.event("C", "AS", send=False)  # 000000, garbled on the line:
        frame = encode_stx(0, "C", "AS")
        device.port.write(frame[:-1] + bytes([frame[-1] ^ 0x55]))  # a bad LRC
        device.event("C", "2D")  # 000001
        await rec.wait(lambda: any(c.card == "2D" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
    # Before: 2D taken for a duplicate of seq 1, the count 000001 for a restart, AS never
    # fetched (2D took its bus seq).
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D"]
    assert [c.seq - cards[0].seq for c in cards] == [0, 1, 2, 3]
    assert stats["frame_checksum"] == 1 and stats["frames_lost"] == 0


async def test_a_shoe_power_cycled_while_unplugged_near_the_wrap_is_still_a_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    # gap_timeout: how long each of the 3 RESENDs of the events before the wrap is waited for
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, _):
        for code in ("QH", "7C"):  # 999992, 999993
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        await unplug(device, rec)
        device.power_cycle()  # its count 3 on replug: as close past a wrap
        device.event("S", "8ACME-10")
        for code in ("2D", "9H"):
            device.event("C", code)
        device.port.open()
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = [(c.card, c.shoe) for c in rec.cards]
        bus_seqs = [c.seq for c in rec.cards]
        reasons = [h.reason for h in rec.health("shoe-1")]
        announced = resets(rec, table_id)
    assert cards == [("QH", "ACME-9"), ("7C", "ACME-9"), ("2D", "ACME-10"), ("9H", "ACME-10")]
    assert bus_seqs == sorted(set(bus_seqs))
    assert len(announced) == 1 and announced[0].data["count"] == 3
    assert [r for r in reasons if "not its seq field wrapping" in r], reasons
    # The events before the wrap asked for RESEND_TRIES times, then the new numbering's.
    assert device.resends == [device.resends[0]] * RESEND_TRIES + [1], device.resends


async def test_a_wrap_while_no_driver_ran_loses_none_of_the_events_before_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    config = acme_config(table_id, tmp_path / "acme")
    state = tmp_path / "state"
    away = ["AS", "2D", "9H", "KS", "3C", "4D", "5H", "6S", "8C"]  # 999994 .. 1000002
    async with acme_line(device, broker, table_id) as rec:
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            await ds.wait_online(20)
            for code in ("QH", "7C"):  # 999992, 999993
                device.event("C", code)
            await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        for code in away:  # the shoe deals on past 999999 while no driver runs
            device.event("C", code)
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            await ds.wait_online(20)
            await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
            await asyncio.sleep(0.3)  # nothing more, nothing twice
            cards = list(rec.cards)
            announced = resets(rec, table_id)
    assert [c.card for c in cards] == ["QH", "7C", *away]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert not announced


async def test_a_shoe_power_cycled_while_no_driver_ran_agreeing_by_chance_is_a_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PowerCycledShoe(tmp_path / "acme", count=0)
    config = acme_config(table_id, tmp_path / "acme")
    state = tmp_path / "state"
    async with acme_line(device, broker, table_id) as rec:
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            await ds.wait_online(20)
            device.event("S", "8ACME-9")
            for code in ("QH", "7C", "AS"):  # seqs 2..4
                device.event("C", code)
            await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        saved = saved_state(state, table_id)
        device.power_cycle()  # numbering from 0 again, while no driver runs
        device.event("S", "8ACME-10")
        for code in ("2D", "9H", "AS"):  # seq 4 is an AS again: the saved check agrees
            device.event("C", code)
        async with DriverSet(config, broker=broker, state_dir=state) as ds:
            await ds.wait_online(20)
            device.event("C", "KD")  # seq 5
            await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
            await asyncio.sleep(0.3)  # nothing more, nothing twice
            cards = [(c.card, c.shoe) for c in rec.cards]
            announced = resets(rec, table_id)
    # Before: the saved check (seq 4, an AS) came back the same, the numbering taken for the
    # old one: 2D, 9H and AS dropped as duplicates, KD published as the old shoe's.
    assert cards == [
        ("QH", "ACME-9"), ("7C", "ACME-9"), ("AS", "ACME-9"),
        ("2D", "ACME-10"), ("9H", "ACME-10"), ("AS", "ACME-10"), ("KD", "ACME-10"),
    ]  # fmt: skip
    assert len(announced) == 1
    assert saved["check"][0] == 4 and [seq for seq, _ in saved["check_before"]] == [1, 2, 3]
