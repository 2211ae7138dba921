"""The device restarts its numbering while the broker is away, and the driver is restarted
before the broker comes back: the old numbering's events still in the bus's outbox can no
longer be fetched from the device, so the driver keeps them (in its state file) and
publishes them again when it starts, under the seqs they were given.

The shoe is the scripted one (``ScriptedShoe``, a real pty); the broker is real, reached
through :class:`BrokerLink`, which stands for a broker that went away."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from devices_rig import ScriptedShoe, unix_ms_base
from link_support import BrokerLink
from test_devices_restart_numbering import seqs_of
from test_devices_robustness import lost_report, recording, shoe_config, until

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_a_reset_while_the_broker_is_away_loses_nothing_over_a_driver_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with (
        ScriptedShoe(tmp_path / "shoe-1") as shoe,
        recording(broker, table_id) as rec,
        BrokerLink(broker) as link,
    ):
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=link.settings, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            base = unix_ms_base(driver.offset)  # a fresh state dir: no state file
            for code in ("QH", "7C", "AS"):
                shoe.card(code)
            await until(lambda: driver._acked[0] == 3)
            link.break_link()
            await until(lambda: not driver.bus.connected)
            shoe.card("2D")  # the old numbering's 4 and 5: stuck in the bus's outbox
            shoe.card("3D")
            await until(lambda: driver.last_device_seq == 5)
            shoe.restart()  # a firmware reset: 4 and 5 can never be fetched again
            shoe.card("KS", "S2")
            await until(lambda: driver.published_seq == base + 6)
        saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
        assert [seq - base for seq, _, _ in saved["unacked"]] == [4, 5]
        link.cut = False  # the broker is back
        async with DriverSet(config, broker=link.settings, state_dir=state) as drivers:
            await drivers.wait_online(20)
            shoe.card("9H", "S2")
            await rec.wait(lambda: any(c.card == "9H" for c in rec.cards))
            await asyncio.sleep(0.5)  # anything else on its way
            driver = drivers.get(table_id, "shoe-1")
            await until(lambda: not driver._unacked)
        saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
    # Before: 2D and 3D (seqs 4 and 5) were never published nor reported lost.
    assert seqs_of(rec, base) == {
        1: {"QH"},
        2: {"7C"},
        3: {"AS"},
        4: {"2D"},
        5: {"3D"},
        6: {"KS"},
        7: {"9H"},
    }
    assert [c.seq - base for c in rec.cards][3:5] == [4, 5]  # before the new numbering's events
    assert not lost_report(rec)
    assert saved["unacked"] == []
