"""A device whose heartbeat stopped but which still answers (docs/devices.md 4.2 step 3:
it does not flap online). The reconnect check's own RESEND made it send the events already
published, and any event frame set it online: online at each reconnect, offline again
``heartbeat_timeout`` later, for as long as it lasted (a docs-only device review). Only a
heartbeat or an event the driver has not had sets it online."""

from __future__ import annotations

from pathlib import Path

from devices_rig import deal_first_three
from test_devices_robustness import online_shoe, until

from studio.config import BrokerSettings


async def test_a_device_without_heartbeats_stays_offline_through_its_resend_answers(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.heartbeats = False
        await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["offline"])
        duplicates = driver.stats["duplicates"]
        # The reconnect: HELLO answered, the check's RESEND answered with seqs 1-3 again.
        await until(lambda: driver.stats["duplicates"] >= duplicates + 3)
        assert not driver.online
        second = driver.stats["connects"]
        await until(lambda: driver.stats["connects"] > second)  # and the next reconnect's
        await until(lambda: driver.stats["duplicates"] >= duplicates + 6)
        assert not driver.online
        assert rec.availability("shoe-1").count("online") == 1
        shoe.card("2D")  # a new event: the device works
        await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["online"])
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
