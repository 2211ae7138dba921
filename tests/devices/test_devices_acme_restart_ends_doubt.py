"""An ACME-STX wrap-count doubt still open when the shoe's numbering restarts: both the
unsettled doubt's report and the restart's reach the health topic whole (docs/devices.md
1.2, 4.3).

The unsettled doubt is a loss, said first in the next health report; a report's reason is
cut at 500 characters. A shoe power-cycled while unplugged with a doubt open: the
reconnect's HELLO leaves the doubt unsettled ("the link dropped"), and the fresh wrap
check, failed, restarts the numbering. Told in one interval, the two did not fit one
report (504 characters): the restart's note that the shoe's cards are "unknown" was cut.
Now the losses go out in a report of their own first when they do not fit.

(The restart's own "the numbering restarted" doubt, ``_restart_numbering``, comes live only
after ``_no_wrap`` with another claim open, which a live wrap check does not let happen: a
claim needs a frame under a seq published, and the check refutes those close to the wrap.
tests/devices/test_devices_health_reasons_packed.py drives it on the driver.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acme_support import acme_online
from test_devices_acme_check_faults import DEALT
from test_devices_acme_reconnect_check import SETTLE, resets, unplug
from test_devices_acme_wrap_doubts import PausableShoe, past_the_wrap_quiet

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS, encode_stx
from drivers.health import REASON_LIMIT
from studio.config import BrokerSettings

DOUBT = (
    "a heartbeat said the device's count went back to 0 during the wrap check; the link "
    "dropped before the device decided it: not settled"
)
NOTE = "shoe 'ACME-9' no longer taken as loaded: cards 'unknown' until the next load"


async def test_a_shoe_restarted_with_a_wrap_doubt_open_reports_the_doubt_and_the_restart_whole(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PausableShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 unreadable: the check passed, it is due
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, ds):
        stats = await past_the_wrap_quiet(device, rec, ds, table_id)
        device.port.write(encode_stx(0, "H"))  # one heartbeat at 0, its count is 2
        async with asyncio.timeout(SETTLE):
            while stats["wrap_counts_doubted"] < 1:
                await asyncio.sleep(0.005)
        # One health interval for both (the doubt at the HELLO, the failed check's restart
        # 3 x gap_timeout later): with the default 0.25 s, they may or may not share one.
        ds.get(table_id, "shoe-1").health_interval = 3.0
        await unplug(device, rec)
        await asyncio.sleep(0.3)  # (the 0.25 s interval running out: the 3 s one begins)
        device.power_cycle()  # 6S and 8C (past the wrap) gone with it
        device.event("C", "KD")  # 1
        device.event("C", "QD")  # 2
        device.port.open()
        device.paused = False
        # The restart's own reason (its offset): the tick's last report.
        await rec.wait(lambda: any("seq offset" in h.reason for h in rec.health("shoe-1")), SETTLE)
        cards = [c.card for c in rec.cards]
        announced = resets(rec, table_id)
        stats = dict(stats)
        reasons = [h.reason for h in rec.health("shoe-1") if h.status == "degraded"]
    assert cards == [*DEALT, "AS", "2D", "9H", "KS", "3C", "4D", "KD", "QD"]
    assert [r.data["count"] for r in announced] == [2]
    assert stats["wrap_counts_doubted"] == stats["wrap_counts_unsettled"] == 1
    assert all(len(r) <= REASON_LIMIT for r in reasons)
    # Both whole. Before, in one report of 500 characters: "...; shoe 'ACME-9' no longer
    # taken as loaded: cards 'unknown' until the next l" (the note's tail cut).
    assert any(DOUBT in r for r in reasons), reasons
    restart = [r for r in reasons if "not its seq field wrapping" in r]
    assert restart and restart[-1].endswith(NOTE), reasons
