"""A DeviceCommand left retained on the commands topic (``mosquitto_pub -r``) is dropped,
never executed: commands are not retained (docs/protocol.md), and a retained one was
handed to every driver start, which shuffled again each time.

The shuffler is the simulator's (a real pty); the broker is real."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import HEARTBEAT, TIMEOUT, start_recorder

from drivers.runner import DriverSet
from hwsim.table import Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Topics
from studio.contract.messages import DeviceCommand


async def test_a_retained_command_is_dropped_at_every_driver_start(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    commands = topics.commands("shuffler-1")
    async with (
        Simulator([table_id], seed=3, base_dir=tmp_path, heartbeat_interval=HEARTBEAT) as sim,
        MessageBus(broker, "operator") as operator,
        asyncio.TaskGroup() as group,
    ):
        rec = await start_recorder(operator, topics, group)
        shuffler = sim.table(table_id).shuffler
        shuffler.put(list(sim.table(table_id).shoe.cards[:104]))
        command = DeviceCommand(command="shuffle", id="op-1", requester="operator")
        await operator.publish(commands, command, retain=True)
        await operator.flush()
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT)
        try:
            for _ in range(2):  # each start is handed the retained command
                async with DriverSet(config, broker=broker) as drivers:
                    await drivers.wait_online(20)
                    driver = drivers.get(table_id, "shuffler-1")
                    await rec.wait(lambda d=driver: d.stats["retained_commands"] >= 1, 10)
                    report = await rec.wait(
                        lambda: [
                            h for h in rec.health("shuffler-1") if "retained command" in h.reason
                        ]
                    )
                    await asyncio.sleep(0.5)  # a SHUFFLE sent would have reached the shuffler
                    assert driver.stats["commands"] == 0
        finally:
            await operator.publish(commands, b"", retain=True)  # the retained message cleared
            await operator.flush()
            rec.stop()
    # Before: the shuffler got a SHUFFLE at each of the two starts.
    assert [f for f in shuffler.host_frames if f.type == "SHUFFLE"] == []
    assert report[0].status == "degraded"
    assert "'shuffle' dropped" in report[0].reason
