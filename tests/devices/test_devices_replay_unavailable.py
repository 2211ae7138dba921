"""A ReplayRequest for seqs the driver no longer buffers is reported (docs/devices.md 4.4),
not only once the buffer has filled up: after a driver restart the buffer holds only what
this driver published.

The shoe is the scripted one (``ScriptedShoe``, a real pty); the broker is real, and the
request comes over it as a consumer's would."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three, run_base
from test_devices_robustness import recording, shoe_config, until

from drivers.runner import DriverSet
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import ReplayRequest, Topics


async def test_a_replay_older_than_the_buffer_after_a_driver_restart_is_reported(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    topics = Topics(table_id)
    async with (
        ScriptedShoe(tmp_path / "shoe-1") as shoe,
        recording(broker, table_id) as rec,
        MessageBus(broker, "controller") as consumer,
    ):
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            await deal_first_three(shoe, rec)
        base = run_base(state, table_id)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            shoe.card("2D")
            await rec.wait(lambda: len(rec.cards) >= 4)
            await consumer.wait_connected()
            # A tail request past everything published is no loss: not reported.
            await consumer.publish(
                topics.replay("shoe-1"), ReplayRequest(from_seq=base + 5, requester="controller")
            )
            await until(lambda: driver.stats["replay_requests"] == 1)
            await asyncio.sleep(0.5)  # a report would be out
            seen = len(rec.health("shoe-1"))
            await consumer.publish(
                topics.replay("shoe-1"), ReplayRequest(from_seq=base + 1, requester="controller")
            )
            # Before: seq 4 alone came again, and no word of 1..3.
            report = await rec.wait(
                lambda: [h for h in rec.health("shoe-1")[seen:] if "replay of" in h.reason], 5
            )
            await rec.wait(lambda: len(rec.cards) >= 5)
    assert report[0].status == "degraded"
    assert (
        f"replay of seq {base + 1}..{base + 3} asked by controller cannot be served"
        in report[0].reason
    )
    assert f"only seq >= {base + 4} is still buffered" in report[0].reason
    assert driver.stats["replay_unavailable"] == 1
    assert driver.stats["replayed"] == 1
    assert [c.seq - base for c in rec.cards] == [1, 2, 3, 4, 4]
    assert not [h for h in rec.health("shoe-1")[:seen] if "replay of" in h.reason]
