"""An event frame the driver will not publish is never dropped without a word.

A review (``probe.py seq0``): an event frame under seq 0 was dropped as a duplicate (it
is at or below every published seq), silently; so was an event that came after its seq
had been given up as lost. And ACME-STX's six-digit seq: the event after 999999 comes as
000000, which was that same silent duplicate (the card lost, health quiet).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three
from test_devices_robustness import recording, shoe_config

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS, encode_stx
from drivers.runner import DriverSet
from hwsim.pty_port import PtyPort
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings, StudioConfig, TableSettings


async def test_an_event_under_seq_0_is_malformed_not_a_silent_duplicate(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
            shoe.port.write(shoe.frame(0, "CARD", "KD", "S1"))  # a device glitch
            await asyncio.sleep(0.3)
            for code in ("2D", "9H"):
                shoe.card(code)
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "event seq 0" in h.reason]
            )
            cards = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards)
            driver = drivers.get(table_id, "shoe-1")
    # Before: counted as a duplicate, no health report at all.
    assert report[0].status == "degraded"
    assert driver.stats["frame_malformed"] == 1 and driver.stats["duplicates"] == 0
    assert [(c.seq, c.card) for c in cards] == [
        (1, "QH"), (2, "7C"), (3, "AS"), (4, "2D"), (5, "9H"),
    ]  # fmt: skip


async def test_an_event_after_its_seq_was_reported_lost_is_reported_not_dropped_silently(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        # gap_timeout: how long each unanswered RESEND for seq 4 is waited for
        config = shoe_config(table_id, shoe.port.link, gap_timeout=0.3)
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
            shoe.answer_resend = False  # the device never fills the gap
            late = shoe.card("KD", send=False)  # seq 4, lost on the line
            shoe.card("2D")
            await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "device seq 4..4 lost" in h.reason]
            )
            await rec.wait(lambda: len(rec.cards) >= 4)
            shoe.port.write(late)  # ... and here it is, too late
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "seq 4 came after" in h.reason]
            )
            driver = drivers.get(table_id, "shoe-1")
    # Before: counted as a duplicate, no word.
    assert report[0].status == "degraded"
    assert driver.stats["late_after_lost"] == 1 and driver.stats["duplicates"] == 0
    assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (5, "2D")]


class WrappingAcmeShoe:
    """An ACME-STX shoe whose count is near 999999: its six-digit seq field wraps."""

    def __init__(self, link: Path, count: int) -> None:
        self.count = count
        self.sent: dict[int, bytes] = {}  # the resend buffer, by the device's full count
        self.port = PtyPort(link, self.on_host)

    def on_host(self, data: bytes) -> None:
        for start in range(len(data)):
            if data[start] == 0x02 and data[start + 7 : start + 8] == b"v":
                self.port.write(encode_stx(self.count % SEQ_MODULUS, "V", "1"))
            elif data[start] == 0x02 and data[start + 7 : start + 8] == b"r":
                end = data.index(0x03, start)
                first = int(data[start + 8 : end])
                # The latest count whose six digits are ``first``, and everything after it.
                oldest = self.count - (self.count - first) % SEQ_MODULUS
                for count in sorted(self.sent):
                    if count >= oldest:
                        self.port.write(self.sent[count])

    def event(self, type_: str, data: str = "", *, send: bool = True) -> None:
        self.count += 1
        frame = self.sent[self.count] = encode_stx(self.count % SEQ_MODULUS, type_, data)
        if send:
            self.port.write(frame)

    async def heartbeats(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            self.port.write(encode_stx(self.count % SEQ_MODULUS, "H"))


async def test_acme_seq_wrap_after_999999_loses_no_card_and_keeps_bus_seqs_contiguous(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = WrappingAcmeShoe(tmp_path / "acme", count=999_996)
    device.event("S", "8ACME-9", send=False)  # 999997: dealt before the driver came
    device.port.open()
    beats = asyncio.create_task(device.heartbeats())
    settings = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(tmp_path / "acme"), heartbeat_timeout=2.0,
        options={"protocol": "acme-stx-shoe"},
    )  # fmt: skip
    config = StudioConfig(tables=[TableSettings(id=table_id, devices=[settings])])
    try:
        async with recording(broker, table_id) as rec, DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            await asyncio.sleep(0.5)  # the reference (999997) fetched
            for code in ("QH", "7C", "AS", "2D", "9H"):  # 999998 .. 1000002
                device.event("C", code)
                await asyncio.sleep(0.05)
            cards = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards)
            await asyncio.sleep(1.0)  # nothing more, nothing twice
            cards = list(rec.cards)
    finally:
        beats.cancel()
        device.port.close()
    # Before: AS (000000) was taken for seq 0 and dropped as a duplicate, silently.
    assert [(c.seq, c.card) for c in cards] == [
        (999_998, "QH"), (999_999, "7C"), (1_000_000, "AS"), (1_000_001, "2D"), (1_000_002, "9H"),
    ]  # fmt: skip
