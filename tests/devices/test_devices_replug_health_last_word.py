"""After a replug, the report of a failed connect ("link down: ... cannot open") was still
pending when the device came back: the health ticker published it after "ok connected",
and a consumer keeping the latest report showed a dealing shoe offline until its next
problem (2 replugs in 12, 23 s and counting; a docs-only device review). A pending
"offline" is dropped once the device is online."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from devices_rig import TIMEOUT, ScriptedShoe
from test_devices_robustness import recording, until

from drivers.shoe import ShoeDriver
from studio.backoff import Backoff
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings


async def test_a_failed_connect_before_a_replug_is_not_the_last_word(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        settings = DeviceSettings(
            id="shoe-1", kind="shoe", port=str(shoe.port.link), heartbeat_timeout=TIMEOUT
        )
        # A health interval long beside the reconnect, so a failed connect's report is
        # still pending when the device is back (as it was, now and then, at 0.25 s).
        driver = ShoeDriver(
            table_id, settings, broker, health_interval=1.0, backoff=Backoff(0.01, 0.01)
        )
        task = asyncio.create_task(driver.run(), name="driver")
        try:
            await until(lambda: driver.online)
            shoe.port.close()  # unplugged
            down = driver.stats["disconnects"]
            await until(lambda: not driver.online and driver.stats["disconnects"] >= down + 2)
            shoe.port.open()  # and plugged in again, on a new pty behind the same link
            await until(lambda: driver.online)
            await until(lambda: driver._health_pending is None)  # the ticker has spoken
            status = driver._status
            shoe.card("QH")
            await rec.wait(lambda: rec.cards)
            await rec.wait(lambda: [h for h in rec.health("shoe-1") if h.status == status])
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    reports = [(h.status, h.reason) for h in rec.health("shoe-1")]
    assert status == "ok", reports
    last_ok = max(i for i, (s, r) in enumerate(reports) if r.startswith("connected to"))
    assert [s for s, _ in reports[last_ok:]] == ["ok"], reports
