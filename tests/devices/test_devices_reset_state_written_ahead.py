"""A driver killed (kill -9, a power cut: no save on the way out) right after its device
restarted its numbering on a live link must come back knowing the new offset: the new
numbering's first events are below the old numbering's saved ``published``, so a write-ahead
that compared ``published`` alone never saved them, and the restarted driver (old offset,
``published`` 7) took the HELLO for a reset again and published the same cards a second time
under other bus seqs, a ``numbering_reset`` under the seq of the new shoe_loaded (a
fault-injection review)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from devices_rig import ScriptedShoe, deal_first_three, run_base, saved_state
from test_devices_robustness import recording, shoe_config

from drivers.runner import DriverSet
from studio.config import BrokerSettings


async def test_the_state_on_disk_has_the_new_offset_before_the_new_numbering_goes_out(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
            base = run_base(state, table_id)
            driver.health_interval = 3600.0  # no periodic save from here on
            await asyncio.sleep(0.3)  # the ticker's current sleep ends
            shoe.restart()  # the link stays up; numbering from 1 again
            shoe.event("SHOE", "S2", "8")  # seq 1 again
            seen: list[tuple[int, dict[str, Any]]] = []
            for n, code in enumerate(["KD", "9S", "4H"], start=4):
                shoe.card(code, "S2")
                card = await rec.wait(lambda n=n: len(rec.cards) >= n and rec.cards[n - 1])
                seen.append((card.seq - base, saved_state(state, table_id)))
    assert [seq for seq, _ in seen] == [5, 6, 7]  # shoe_loaded S2 is 4
    # What a driver killed at that moment loads: every seq consumers hold is covered.
    covered = [int(s["offset"]) - base + int(s["published"]) for _, s in seen]
    # Before: the old offset with published 3 (the old numbering's), covering seq 3 only.
    assert covered == [5, 6, 7], seen
