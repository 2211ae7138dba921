"""A gap given up once its RESEND did not fill it gives up only the holes that RESEND asked
for: a card garbled on the line after the RESEND went out (a hole newer than the request)
is asked for afresh, not reported lost with the old hole. Before, the give-up took every
hole below the held frames (an ACME-STX shoe in a fault-injection review: "device seq
108..108 lost: resend did not fill the gap in time", no RESEND ever covering 108)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe
from test_devices_robustness import recording, shoe_config, until

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_hole_newer_than_the_resend_is_asked_for_not_given_up(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, gap_timeout=1.0)
        async with DriverSet(config, broker=broker) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            shoe.card("QH")  # 1
            await rec.wait(lambda: len(rec.cards) >= 1)
            shoe.card("7C", send=False)  # 2: never on the wire, and gone from the buffer
            del shoe.sent[2]
            resends = len([h for h in shoe.host_frames if h.type == "RESEND"])
            shoe.card("AS")  # 3: held, RESEND from 2 (answered: ACK, then 3 again)
            await until(lambda: len([h for h in shoe.host_frames if h.type == "RESEND"]) > resends)
            garbled = shoe.card("2D", send=False)  # 4: garbled on the line, still buffered
            # The card field only: the CRC (4 hex digits, the time in it) held "2D" in about
            # 1 run in 80, made "CRC is not hex" (malformed), not a checksum failure.
            shoe.port.write(garbled.replace(b",2D,", b",2X,"))
            shoe.card("KD")  # 5: held
            await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), timeout=10)
            await asyncio.sleep(0.3)
    cards = rec.cards
    losses = [h.reason for h in rec.health("shoe-1") if " lost: " in h.reason]
    assert driver.stats["frame_checksum"] == 1
    # Before: 2D reported lost ("device seq 2..2 lost", then "4..4 lost") with KD published
    # as 5, though no RESEND had asked for seq 4.
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (3, "AS"), (4, "2D"), (5, "KD")]
    assert driver.stats["frames_lost"] == 1
    assert [r for r in losses if "4..4" in r] == []
