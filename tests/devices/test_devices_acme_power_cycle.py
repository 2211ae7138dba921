"""An ACME-STX shoe power-cycled near its six-digit wrap is a numbering restart, not a jump.

A codec that unwraps six digits against the highest it decoded (tried on 2026-12-06, with
a 100,000 window, and reverted before it was switched on) read a count ``000000``..small
after ~950,000 as the device counting on across the wrap: the driver waited for 50,000
events that never existed, asked for them (``RESEND``), reported them lost and no restart
(docs/devices.md, *ACME-STX's seq wrap*). Every card the device dealt goes out once, a
restart is reported, and nothing is asked for beyond the new numbering.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acme_support import acme_online
from test_devices_seq_never_published import WrappingAcmeShoe

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS
from studio.config import BrokerSettings

SETTLE = 5.0  # what a wait allows (a failing case fails in this, not in 20 s)


class PowerCycledShoe(WrappingAcmeShoe):
    """Records the RESENDs the host asks for; ``power_cycle`` numbers from 0 again."""

    def __init__(self, link: Path, count: int) -> None:
        super().__init__(link, count)
        self.resends: list[int] = []

    def on_host(self, data: bytes) -> None:
        for start in range(len(data)):
            if data[start] == 0x02 and data[start + 7 : start + 8] == b"r":
                self.resends.append(int(data[start + 8 : data.index(0x03, start)]))
        super().on_host(data)

    def power_cycle(self) -> None:
        self.count = 0
        self.sent.clear()
        self.resends.clear()


async def power_cycle_run(
    broker: BrokerSettings, table_id: str, tmp_path: Path, count: int
) -> tuple[PowerCycledShoe, list[tuple[str, str]], list[str], dict[str, int], list[int]]:
    device = PowerCycledShoe(tmp_path / "acme", count=count)
    device.event("S", "8ACME-9", send=False)  # dealt before the driver came: the reference
    async with acme_online(device, broker, table_id) as (rec, ds):
        await asyncio.sleep(0.5)  # the reference fetched
        for code in ("QH", "7C"):
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        device.power_cycle()  # off and on again: numbering from 0, the buffer empty
        await asyncio.sleep(0.5)
        device.event("S", "8ACME-10")
        for code in ("2D", "9H"):
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 4, SETTLE)
        await asyncio.sleep(1.5)  # nothing more, nothing twice, no gap timing out
        cards = [(c.card, c.shoe) for c in rec.cards]
        bus_seqs = [c.seq for c in rec.cards]
        reasons = [h.reason for h in rec.health("shoe-1")]
        stats = dict(ds.get(table_id, "shoe-1").stats)
    assert cards == [("QH", "ACME-9"), ("7C", "ACME-9"), ("2D", "ACME-10"), ("9H", "ACME-10")]
    assert bus_seqs == sorted(set(bus_seqs))  # increasing, each once
    return device, cards, reasons, stats, bus_seqs


async def test_a_power_cycle_shortly_before_the_wrap_is_a_restart_not_a_jump(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # At 950,000 the device restarts from 0: its HELLO/heartbeat 000000 is 50,000 ahead of
    # the high-water mark, inside SEQ_WINDOW, and unwraps to 1,000,000.
    device, _, reasons, stats, _ = await power_cycle_run(broker, table_id, tmp_path, 949_996)
    assert [r for r in reasons if "device restarted its numbering at 0" in r], reasons
    assert stats.get("frames_lost", 0) == 0, stats
    # No RESEND for the 50,000 the unwrap said were missing (950,001.. modulo 1,000,000).
    assert all(seq < 100 for seq in device.resends), device.resends


async def test_a_power_cycle_just_after_the_wrap_is_a_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # The count 1,000,005 (000005) then 000000: below the high by 5, a small count.
    device, _, reasons, stats, _ = await power_cycle_run(
        broker, table_id, tmp_path, SEQ_MODULUS + 1
    )
    assert [r for r in reasons if "device restarted its numbering at 0" in r], reasons
    assert stats.get("frames_lost", 0) == 0, stats
    assert all(seq < 100 for seq in device.resends), device.resends
