"""A reset before the first-contact reference came: with no saved state the driver fetches the
device's last event at first contact (seq N, not published) as its reference. If the link
drops before that event arrives, and the device is power-cycled and deals N or more events
before the link comes back, the event fetched under seq N belongs to the new numbering. Taken
as the reference, it was not published and the new events 1..N counted as already seen: dealt
cards lost without a word. SDL/1 devices stamp their events with their clock: an event
stamped after the first HELLO cannot be the device's last event at that HELLO."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from devices_rig import ScriptedShoe
from test_devices_robustness import recording, shoe_config
from test_devices_vendor_codec import FakeAcmeShoe

from drivers.runner import DriverSet
from hwsim.framing import frame
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings, StudioConfig, TableSettings


class ClockShoe(ScriptedShoe):
    """A scripted shoe whose clock can be moved on: a power cycle takes longer than the
    driver's skew tolerance, which the test does not sleep through."""

    later_ms = 0

    def frame(self, seq: int, type_: str, *fields: str) -> bytes:
        return frame(self.device, seq, int(time.time() * 1000) + self.later_ms, type_, *fields)


async def test_a_reset_before_the_reference_came_is_published_as_a_new_numbering(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    shoe = ClockShoe(tmp_path / "shoe-1")
    async with shoe, recording(broker, table_id) as rec:
        for code in ("QH", "7C", "AS"):
            shoe.card(code, send=False)  # dealt before any driver ran (no state)
        shoe.answer_resend = False  # the reference (seq 3) does not come on this connection
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            assert driver._learn == 3
            shoe.port.close()  # unplugged before the reference came
            shoe.restart()  # power-cycled meanwhile (a minute later by its clock)
            shoe.later_ms = 60_000
            shoe.event("SHOE", "S2", "8", send=False)
            shoe.card("KD", "S2", send=False)
            shoe.card("9S", "S2", send=False)  # HELLO says 3: as many as at first contact
            shoe.answer_resend = True
            shoe.port.open()
            cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards, timeout=10)
            loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
            await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
            )
            await asyncio.sleep(0.3)
    # Before: 9S (new seq 3) was taken as the reference, SHOE and KD as already seen: nothing
    # was published and nothing reported.
    # (Seq 4 is the numbering_reset event published at the reconnect.)
    assert [(c.seq, c.card) for c in rec.cards] == [(6, "KD"), (7, "9S")]
    assert cards == rec.cards and [e.seq for e in loaded] == [5]
    assert driver.offset == 4 and driver.stats["frames_lost"] == 0


async def test_a_reset_with_fewer_events_before_the_reference_came_is_seen_by_the_hello(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        for code in ("QH", "7C", "AS"):
            shoe.card(code, send=False)
        shoe.answer_resend = False
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            assert driver._learn == 3
            shoe.port.close()
            shoe.restart()  # its clock unchanged: the HELLO below 3 tells the reset alone
            shoe.event("SHOE", "S2", "8", send=False)
            shoe.card("KD", "S2", send=False)
            shoe.answer_resend = True
            shoe.port.open()
            await rec.wait(lambda: rec.cards, timeout=10)
            loaded = await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
            await asyncio.sleep(0.3)
    assert [(c.seq, c.card) for c in rec.cards] == [(6, "KD")]  # 4: numbering_reset
    assert [e.seq for e in loaded] == [5]
    assert driver.offset == 4 and driver._learn is None


class ScriptedAcmeShoe(FakeAcmeShoe):
    answer_resend = True

    def on_host(self, data: bytes) -> None:
        if self.answer_resend or b"r" not in data:
            super().on_host(data)


async def test_without_a_device_clock_a_reference_fetched_after_a_reconnect_is_reported(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """ACME-STX frames carry no device time: a reset before the reference came cannot be told,
    so the driver says cards may have been missed instead of nothing."""
    device = ScriptedAcmeShoe(tmp_path / "acme")
    for code in ("QH", "7C", "AS"):
        device.event("C", code)  # port not open yet: dealt before any driver ran
    device.answer_resend = False
    device.port.open()
    beats = asyncio.create_task(device.heartbeats())
    settings_ = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(tmp_path / "acme"), heartbeat_timeout=2.0,
        options={"protocol": "acme-stx-shoe"},
    )  # fmt: skip
    config = StudioConfig(tables=[TableSettings(id=table_id, devices=[settings_])])
    try:
        async with recording(broker, table_id) as rec:
            async with DriverSet(config, broker=broker) as ds:
                driver = ds.get(table_id, "shoe-1")
                await ds.wait_online(20)
                assert driver._learn == 3
                device.port.close()
                device.seq, device.sent = 0, []  # power-cycled
                for code in ("KD", "9S", "4H"):
                    device.event("C", code)
                device.answer_resend = True
                device.port.open()
                missed = await rec.wait(
                    lambda: [h for h in rec.health("shoe-1") if "may have been missed" in h.reason],
                    timeout=10,
                )
                await asyncio.sleep(0.3)
    finally:
        beats.cancel()
        device.port.close()
    assert missed[0].status == "degraded"
    assert "no device clock" in missed[0].reason
