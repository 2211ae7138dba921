"""Health reports are coalesced (one per interval): what a later, milder report in the same
interval says must not hide an earlier loss. The shoe is the scripted one on a real pty;
the broker is real."""

from __future__ import annotations

import time
from pathlib import Path

from test_devices_robustness import lost_report, online_shoe, until

from hwsim.framing import frame
from studio.config import BrokerSettings


async def test_a_loss_is_reported_even_if_the_clock_recovers_in_the_same_interval(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.heartbeats = False

        def beat(skew_ms: int) -> bytes:
            return frame("shoe-1", shoe.seq, int(time.time() * 1000) + skew_ms, "HB", "OK")

        # The device clock 10 s ahead: taken once a second heartbeat agrees (one outlying
        # heartbeat alone is not trusted).
        shoe.port.write(beat(10_000))
        shoe.port.write(beat(10_000))
        await rec.wait(lambda: [h for h in rec.health("shoe-1") if "skewed" in h.reason])
        shoe.answer_resend = False
        shoe.card("QH", send=False)
        shoe.card("7C", send=False)
        shoe.sent.clear()  # gone from the shoe's buffer too
        shoe.port.write(beat(10_000))  # says seq 2: the driver asks for 1..
        await until(lambda: any(f.type == "RESEND" for f in shoe.host_frames))
        ref = [f for f in shoe.host_frames if f.type == "RESEND"][-1].seq
        # In one write: "no longer buffered" (seqs 1 and 2 lost), then a heartbeat whose
        # clock is right again. Both land in one coalescing interval.
        nak = frame("shoe-1", shoe.seq, int(time.time() * 1000), "NAK", str(ref), "E04", "3")
        shoe.port.write(nak + beat(0))
        await until(lambda: driver.stats["frames_lost"] == 2)
        report = await rec.wait(lambda: lost_report(rec))
        shoe.heartbeats = True
    # Before: this report said "ok: device clock back within tolerance", the loss unsaid.
    assert report[0].status == "degraded"
    assert "device seq 1..2 lost" in report[0].reason
