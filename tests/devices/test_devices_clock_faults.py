"""A device clock that goes wrong (a flat RTC battery, a firmware bug) sends CRC-valid
frames with impossible times. They must not stop the driver, nor put an impossible
``ts`` on the bus: the event goes out with host time and health says why."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe
from test_devices_robustness import recording, shoe_config

from drivers.runner import DriverSet
from hwsim.framing import frame
from studio.config import BrokerSettings

YEAR_33658 = 999_999_999_999_999  # the largest time SDL/1 allows (15 digits)


def send_at(shoe: ScriptedShoe, time_ms: int, type_: str, *fields: str) -> None:
    """An event frame stamped ``time_ms`` instead of the device's clock."""
    shoe.seq += 1
    data = shoe.sent[shoe.seq] = frame(shoe.device, shoe.seq, time_ms, type_, *fields)
    shoe.port.write(data)


async def test_an_event_from_an_impossible_time_does_not_stop_the_driver(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            await drivers.wait_online(20)
            send_at(shoe, YEAR_33658, "CARD", "QH", "S1")
            shoe.card("7C")
            cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "not a possible time" in h.reason]
            )
    # Before: datetime.fromtimestamp raised "year 33658 is out of range" in the read loop,
    # which is no link error: the driver's task group, and every device of the process, died.
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C")]
    assert abs((cards[0].ts - cards[1].ts).total_seconds()) < 5
    assert report[0].status == "degraded"


async def test_a_heartbeat_from_an_impossible_time_does_not_stop_the_driver(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            await drivers.wait_online(20)
            shoe.heartbeats = False
            await asyncio.sleep(0.3)
            # One glitched heartbeat: the skew taken from it would move the next card's
            # time back before the year 1.
            shoe.port.write(frame(shoe.device, shoe.seq, YEAR_33658, "HB", "OK"))
            await asyncio.sleep(0.2)
            shoe.card("QH")
            cards = await rec.wait(lambda: rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH")]


async def test_an_event_stamped_0_from_a_clock_in_sync_goes_out_with_host_time(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            await drivers.wait_online(20)
            send_at(shoe, 0, "CARD", "QH", "S1")  # a clock not set, or a glitch
            shoe.card("7C")
            cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "not a possible time" in h.reason]
            )
    # Before: published as 1970-01-01T00:00:00Z, with no report (a docs-only device review).
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C")]
    assert abs((cards[0].ts - cards[1].ts).total_seconds()) < 5
    assert report[0].status == "degraded"
