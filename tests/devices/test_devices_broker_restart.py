"""The broker goes away mid-stream and comes back: no card lost or duplicated at the consumer.

The consumer is a :class:`DeviceFeed` (dedupe by (device, seq), gap repair by
ReplayRequest from the driver's replay buffer). Both kinds of broker are
restarted for real on the same port: an EmbeddedBroker (amqtt) hosted in a
child process (see ``devices_broker_child.py`` for why), and a Mosquitto this
test starts itself on a free port (the system one on 1883 is left alone).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from drivers.consumer import DeviceFeed
from drivers.runner import DriverSet
from hwsim.table import Simulator
from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import DeviceEvent, ShoeCard, Topics

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
CARDS = 150


async def _port_open(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    return True


@asynccontextmanager
async def restartable(
    kind: str, tmp_path: Path
) -> AsyncIterator[tuple[str, Callable[[], Awaitable[None]]]]:
    """Yield the broker URL and a coroutine function that stops the broker and starts it again."""
    port = free_port()
    if kind == "embedded":
        command = [
            sys.executable,
            str(Path(__file__).with_name("devices_broker_child.py")),
            str(port),
        ]
    else:
        if not Path(MOSQUITTO).exists():
            pytest.skip("mosquitto binary not installed")
        conf = tmp_path / "mosquitto.conf"
        conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        command = [MOSQUITTO, "-c", str(conf)]
    procs: list[asyncio.subprocess.Process] = []

    async def start() -> None:
        procs.append(
            await asyncio.create_subprocess_exec(*command, stderr=asyncio.subprocess.DEVNULL)
        )
        async with asyncio.timeout(30):
            while not await _port_open(port):
                await asyncio.sleep(0.05)

    async def restart() -> None:
        proc = procs[-1]
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await asyncio.sleep(0.5)
        await start()

    await start()
    try:
        yield f"mqtt://127.0.0.1:{port}", restart
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


@pytest.mark.parametrize("kind", ["embedded", "mosquitto"])
async def test_broker_restart_mid_stream_loses_and_duplicates_nothing(
    kind: str, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    async with (
        restartable(kind, tmp_path) as (url, restart),
        Simulator([table_id], seed=5, base_dir=tmp_path, heartbeat_interval=0.2) as sim,
    ):
        broker = BrokerSettings(url=url, client_id_prefix=table_id)
        table = sim.table(table_id)
        models = {topics.shoe_cards: ShoeCard, topics.shoe_events: DeviceEvent}
        async with (
            MessageBus(broker, "round-controller") as bus,
            DeviceFeed(bus, topics, "shoe-1", models, repair_interval=0.2) as feed,  # type: ignore[arg-type]
            DriverSet(sim.studio_config(url, heartbeat_timeout=3.0), broker=broker) as drivers,
        ):
            await bus.wait_connected()
            await drivers.wait_online(20)
            dealt: list[str] = []
            received: list[ShoeCard] = []

            async def collect() -> None:
                async for event in feed:
                    assert isinstance(event, ShoeCard)
                    received.append(event)

            collector = asyncio.create_task(collect())
            for i in range(CARDS):
                dealt += [c.code for c in table.deal()]
                if i == CARDS // 3:
                    await restart()
                await asyncio.sleep(0.005)
            async with asyncio.timeout(60):
                while len(received) < len(dealt):
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # late duplicates, if any, would show up now
            collector.cancel()
            by_seq = sorted(received, key=lambda c: c.seq)
            assert [c.card for c in by_seq] == dealt
            assert len({c.seq for c in received}) == len(received) == CARDS
            assert bus.stats.connects >= 2  # the consumer really lost the broker
            assert drivers.get(table_id, "shoe-1").bus.stats.connects >= 2


@pytest.mark.parametrize("kind", ["embedded", "mosquitto"])
async def test_a_broker_link_that_drops_soon_after_connack_keeps_backing_off(
    kind: str, tmp_path: Path
) -> None:
    async with restartable(kind, tmp_path) as (url, restart):
        bus = MessageBus(BrokerSettings(url=url), "flapping")
        async with bus:
            await bus.wait_connected()
            await restart()  # the link was up for moments only
            async with asyncio.timeout(30):
                while bus.stats.connects < 2:
                    await bus.publish("flapping/events", b"tick")  # traffic shows the link down
                    await asyncio.sleep(0.05)
            # A CONNACK alone reset the backoff, so a broker that takes the link and drops
            # it at once (a duplicate client id, an oversized message) was retried every
            # 50 ms for ever. Only a session that stays up resets it now.
            assert bus._backoff.attempts > 0
