"""A demo camera stopped while it hands a sighting on: the sighting goes out, then it stops.

A camera numbers a sighting, saves the number, then publishes it. The demo cancelled its
cameras when it stopped: one cancelled while saving had taken the number and sent nothing,
and the drain that follows (every device's last number must reach the controller) waited
its full 5 s for a sighting that never came.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from drivers.state import StateFile
from studio.bus import EmbeddedBroker, MessageBus
from studio.config import BrokerSettings
from studio.contract import CameraCard, Topics
from studio.demo.camera import DemoCamera, learn_demo_profile
from studio.demo.run import stop_bots


class HeldState(StateFile):
    """A state file whose first save waits until released (a slow disk, at the worst time)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.entered = threading.Event()
        self.release = threading.Event()

    def save(self, data: dict[str, Any]) -> None:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(30)
        super().save(data)


@pytest.mark.timeout(120)
async def test_a_camera_stopped_while_saving_still_publishes_what_it_numbered(
    tmp_path: Path,
) -> None:
    table = f"t-{uuid.uuid4().hex[:8]}"
    profile = await asyncio.to_thread(learn_demo_profile, 5)
    state = HeldState(tmp_path / "cam.json")
    async with EmbeddedBroker() as broker:
        settings = BrokerSettings(url=broker.url)
        async with (
            MessageBus(settings, "cam") as cam_bus,
            MessageBus(settings, "listener") as listener,
        ):
            await cam_bus.wait_connected()
            async with listener.subscribe(Topics(table).camera_cards, CameraCard) as seen:
                await listener.wait_connected()
                camera = DemoCamera(table, cam_bus, profile, seats=1, seed=1, state=state)
                task = asyncio.create_task(camera.run(), name="camera")
                camera.place("QH", "seat:1")
                async with asyncio.timeout(30):
                    while not state.entered.is_set():
                        await asyncio.sleep(0.02)
                # Numbered, being saved: the demo stops now.
                stopping = asyncio.create_task(stop_bots([task], {task: camera}))
                await asyncio.sleep(0.3)
                state.release.set()
                async with asyncio.timeout(10):
                    await stopping
                assert task.done()
                # Its state file had no seq: numbered from the Unix time in ms (a state
                # lost must not number below what an earlier run published).
                base = camera.service.seq - 1
                assert base > 1_600_000_000_000
                async with asyncio.timeout(10):
                    received = (await seen.get()).payload
    assert (received.seq - base, received.card, received.zone) == (1, "QH", "seat:1")
