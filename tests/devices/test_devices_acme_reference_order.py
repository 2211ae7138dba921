"""The device's last event at first contact (the reference, fetched once with RESEND) is
followed for the ACME-STX shoe id only if nothing newer was published before it came.

A load published live while the reference was on its way (the device sent it ahead of its
RESEND answer) named the shoe in play; the reference, an older load, then replaced it, and
every later card went out stamped with the old shoe: held by logic 10 against the load the
controller had taken. A real pty and a real broker.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_devices_acme_shoe_id import acme_config, stamped
from test_devices_robustness import recording
from test_devices_vendor_codec import FakeAcmeShoe

from drivers.codecs.acme_stx_shoe import encode_stx
from drivers.runner import DriverSet
from studio.config import BrokerSettings


class LoadsBeforeItResends(FakeAcmeShoe):
    """Sends a new load live just before it answers the driver's first RESEND."""

    def __init__(self, link: Path, shoe: str) -> None:
        super().__init__(link)
        self.shoe = shoe
        self.raced = False

    def on_host(self, data: bytes) -> None:
        for start in range(len(data)):
            resend = data[start] == 0x02 and data[start + 7 : start + 8] == b"r"
            if resend and not self.raced:
                self.raced = True
                self.event("S", self.shoe)
        super().on_host(data)


async def test_a_load_published_before_the_reference_came_stays_the_shoe(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = LoadsBeforeItResends(tmp_path / "acme", "6ACME-10")
    device.sent, device.seq = [encode_stx(1, "S", "8ACME-9")], 1  # its last event: a load
    device.port.open()
    beats = asyncio.create_task(device.heartbeats())
    try:
        async with recording(broker, table_id) as rec:
            config = acme_config(table_id, tmp_path / "acme")
            async with DriverSet(config, broker=broker) as drivers:
                await drivers.wait_online(20)
                # ACME-10's load, published live ahead of the RESEND's answer
                await rec.wait(lambda: rec.events(rec.topics.shoe_events, "shoe_loaded"))
                device.event("C", "AS")
                await rec.wait(lambda: len(rec.cards) >= 1)
    finally:
        beats.cancel()
        device.port.close()
    loads = [e.data["shoe"] for e in rec.events(rec.topics.shoe_events, "shoe_loaded")]
    assert loads == ["ACME-10"]  # the reference (ACME-9) is not published
    # Before: stamped 'ACME-9', the reference followed after the newer load.
    assert stamped(rec) == [(3, "AS", "ACME-10")]
