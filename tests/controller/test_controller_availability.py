"""The controller's own availability: retained ``online``, its last will ``offline``.

A review killed the controller (kill -9) mid-deal: the retained ``dealer/prompt`` went on
saying "deal to seat 1" after the dealer drew that card, and nothing on the broker told a
dealer's display that the controller was gone. Now ``studio controller run`` connects with a
retained ``online`` on ``studio/v1/controllers/{client id}/availability`` and a last will
``offline`` there, which the broker publishes when the process dies (and a clean stop
publishes itself).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from http_support import controller_config, start_controller, wait_healthy

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import Availability
from studio.contract.topics import controller_availability


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_the_controller_is_seen_offline_once_it_is_gone(
    broker: BrokerSettings, tmp_path: Path, table_id: str, how: str
) -> None:
    port = free_port()
    topic = controller_availability(f"{broker.client_id_prefix}-controller")
    seen: list[str] = []
    async with (
        MessageBus(broker, f"display-{table_id}") as bus,
        bus.subscribe(topic, Availability) as subscription,
    ):

        async def watch() -> None:
            async for received in subscription:
                seen.append(received.payload.state)

        async with asyncio.TaskGroup() as group:
            watcher = group.create_task(watch())
            process = await start_controller(controller_config(tmp_path, broker, table_id, port))
            try:
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", timeout=10
                ) as client:
                    await wait_healthy(client, process)
                async with asyncio.timeout(20):
                    while seen[-1:] != ["online"]:
                        await asyncio.sleep(0.05)
                process.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 60)
                async with asyncio.timeout(30):
                    while seen[-1:] != ["offline"]:
                        await asyncio.sleep(0.05)
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                watcher.cancel()
    assert seen[-2:] == ["online", "offline"]
