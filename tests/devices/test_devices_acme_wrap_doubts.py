"""The ACME-STX wrap check's doubts, a second review (2026-12-06, docs/devices.md 1.2).

One corrupted frame passes ACME's 8-bit LRC 1 in 256: it must not raise an integrity alert
on its own (a ``numbering_reset`` stops the table in a card phase). A real restart must not
lose cards silently. When the two conflict, the driver asks the device again.

* A garbled frame between the heartbeat at 999999 and a plain live wrap made the restart
  announced, though nothing was lost (d27a82d).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acme_support import acme_online
from test_devices_acme_check_faults import FaultyAnswersShoe
from test_devices_acme_reconnect_check import SETTLE, resets

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS, encode_stx
from studio.config import BrokerSettings


class PausableShoe(FaultyAnswersShoe):
    """Its heartbeats stopped while ``paused``; ``beat`` sends one."""

    paused = False

    async def heartbeats(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            if not self.paused:
                self.beat()

    def beat(self) -> None:
        self.port.write(encode_stx(self.count % SEQ_MODULUS, "H"))


async def test_a_garbled_frame_next_to_a_plain_live_wrap_is_not_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PausableShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)  # 999996
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C", "AS"):  # 999997 .. 999999
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        await asyncio.sleep(0.3)  # heartbeats at 999999 read
        device.event("C", "2D")  # 000000, read as sent
        beat = encode_stx(0, "H")
        device.port.write(beat[:-1] + bytes([beat[-1] ^ 0x55]))  # one heartbeat garbled
        await rec.wait(
            lambda: any("restarted its numbering" in h.reason for h in rec.health("shoe-1")),
            SETTLE,
        )
        device.event("C", "9H")  # 000001
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = list(rec.cards)
        stats = dict(ds.get(table_id, "shoe-1").stats)
        announced = resets(rec, table_id)
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "9H"]
    assert stats.get("frames_lost", 0) == 0 and stats["frame_checksum"] == 1
    # Before: announced ("1 frame(s) unreadable since the device's last count: events of
    # the old numbering may be lost"), an INTEGRITY stop in a card phase, though every card
    # came out once. The check fetched the events before the wrap again: nothing lost.
    assert not announced


async def test_a_plain_live_wrap_card_dealt_before_the_next_heartbeat_is_fetched_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """What the plain wrap does not save (docs/devices.md 1.2): a card dealt past the wrap
    before the first heartbeat past it is dropped as a duplicate and fetched after the
    restart; nothing lost, nothing twice."""
    device = PausableShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)  # 999996
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C", "AS"):  # 999997 .. 999999
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        device.paused = True
        await asyncio.sleep(0.15)
        device.event("C", "2D")  # 000000
        device.event("C", "9H")  # 000001, before any heartbeat past the wrap
        device.paused = False
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)
        cards = list(rec.cards)
        stats = dict(ds.get(table_id, "shoe-1").stats)
        announced = resets(rec, table_id)
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "9H"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert stats["duplicates"] >= 1 and stats.get("frames_lost", 0) == 0
    assert not announced
