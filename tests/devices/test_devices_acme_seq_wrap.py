"""ACME-STX's six-digit seq wrap, and its STX/ETX framing.

The wrap after 999999 is a numbering restart (docs/devices.md, *ACME-STX's seq wrap*): a
driver restarted with saved state past it publishes nothing twice. A frame cut right after
its ETX took the next frame's STX for its LRC byte (``acme_trunc.py``).

Unwrapping the six digits against a high-water mark (``Codec.resume``) was reverted before
it was switched on: a power cycle near the wrap read as the device counting on
(``test_devices_acme_power_cycle.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acme_support import acme_config, acme_line
from test_devices_seq_never_published import WrappingAcmeShoe

from drivers.codecs import FrameError
from drivers.codecs.acme_stx_shoe import AcmeStxShoeCodec, encode_stx
from drivers.runner import DriverSet
from studio.config import BrokerSettings


def test_a_frame_without_its_lrc_does_not_swallow_the_next_frame() -> None:
    cut = encode_stx(2, "C", "QH")[:-1]  # cut right after its ETX
    out = AcmeStxShoeCodec(clock=lambda: 0.0).feed(cut + encode_stx(3, "C", "KD"))
    # Before: ['checksum', 'garbage']: the next frame's STX taken as the LRC byte.
    assert [o.kind if isinstance(o, FrameError) else o.seq for o in out] == ["checksum", 3]
    # The same for a frame too long, cut after its ETX (its rest skipped through the LRC).
    too_long = b"\x02" + b"0" * 70 + b"\x03"
    out = AcmeStxShoeCodec(clock=lambda: 0.0).feed(too_long + encode_stx(3, "C", "KD"))
    # Before: ['too_long'] only: the next frame's STX skipped as the LRC byte.
    assert [o.kind if isinstance(o, FrameError) else o.seq for o in out] == ["too_long", 3]


SETTLE = 5.0  # what a wait allows (a failing case fails in this, not in 20 s)


async def test_a_driver_restarted_past_the_wrap_publishes_nothing_twice(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = WrappingAcmeShoe(tmp_path / "acme", count=999_996)
    device.event("M", send=False)  # 999997: the reference at first contact
    config = acme_config(table_id, tmp_path / "acme")
    state = tmp_path / "state"
    async with acme_line(device, broker, table_id) as rec:
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            await asyncio.sleep(0.5)  # the reference fetched
            device.event("S", "8ACME-9")
            for code in ("QH", "7C", "AS"):  # 999999 .. 1000001
                device.event("C", code)
            await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        device.event("C", "2D")  # while no driver runs
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            device.event("C", "9H")
            await rec.wait(lambda: len(rec.cards) >= 5, SETTLE)
            await asyncio.sleep(0.5)  # nothing twice
            cards = list(rec.cards)
    # (A codec unwrapping from nothing would take the HELLO, 000002, for a restart at 2
    # and publish 7C and AS again, fetched as the new numbering's 1 and 2.)
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "9H"]
    assert [c.seq - cards[0].seq for c in cards] == [0, 1, 2, 3, 4]
