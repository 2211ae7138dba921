"""One heartbeat with a glitched time (an hour ahead) set the skew correction, and the
next card, stamped correctly, went out an hour in the past (with a report of a skew the
device clock never had; a docs-only device review). A time far from the device's clock as
known is used only once the next frame agrees: a clock that really stepped is still
corrected."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three
from test_devices_robustness import online_shoe, until

from hwsim.framing import frame
from studio.config import BrokerSettings

HOUR_MS = 3_600_000


def beat_at(shoe: ScriptedShoe, time_ms: int) -> None:
    shoe.port.write(frame(shoe.device, shoe.seq, time_ms, "HB", "OK"))


def card_at(shoe: ScriptedShoe, time_ms: int, code: str) -> None:
    shoe.seq += 1
    shoe.sent[shoe.seq] = frame(shoe.device, shoe.seq, time_ms, "CARD", code, "S1")
    shoe.port.write(shoe.sent[shoe.seq])


def off_host(ts: datetime) -> float:
    """Seconds between ``ts`` and the host's clock now (an hour is what is looked for)."""
    return abs(ts.timestamp() - datetime.now(UTC).timestamp())


async def test_one_glitched_heartbeat_does_not_restamp_the_next_card(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        now = int(time.time() * 1000)
        beat_at(shoe, now + HOUR_MS)  # glitched: the device clock is in sync
        card_at(shoe, now + 50, "2D")  # stamped correctly, 50 ms later
        glitched = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards[3])
        assert off_host(glitched.ts) < 600  # before: an hour in the past
        beats = driver.stats["heartbeats"]
        # A clock that really stepped an hour ahead: two heartbeats say so, and the card
        # after them is corrected to host time.
        now = int(time.time() * 1000)
        beat_at(shoe, now + HOUR_MS)
        beat_at(shoe, now + HOUR_MS + 20)
        await until(lambda: driver.stats["heartbeats"] >= beats + 2)
        card_at(shoe, now + HOUR_MS + 40, "9H")
        stepped = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards[4])
        report = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "clock skewed by +36" in h.reason]
        )
    assert (glitched.card, stepped.card) == ("2D", "9H")
    assert off_host(stepped.ts) < 600
    assert report[0].status == "degraded"
