"""One process per camera: a second ``studio camera run`` of the same camera refuses.

Before, a second instance connected with the running camera's MQTT client id, so the
two knocked each other off the broker (the broker published the running one's last
will, ``offline``) and it said ``offline`` itself until its first frame: ``camera cam-1
went offline`` alerts for a camera that worked. Now it takes the camera's run lock
(``STATE_DIR/{table}__{device}.run.lock``) first, and exits with status 2 naming the
pid that runs the camera, having published nothing.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from service_support import camera_config

from calibration.deck_profile import DeckProfile
from hwsim.camera.virtual import VirtualCamera
from studio.bus import MessageBus, Subscription
from studio.config import BrokerSettings
from studio.contract import Availability, CameraCard, DeviceHealth, Topics

STUDIO = Path(sys.executable).parent / "studio"


def _write_setup(
    tmp_path: Path, deck_profile: DeckProfile, broker: BrokerSettings, table: str
) -> Path:
    # "virtual" is the simulator's live camera with seed 0: the table calibration is its own.
    VirtualCamera(level="easy", seed=0).calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    options = 'source = "virtual", deck = "deck.json", table = "table.json", max_fps = 5'
    return camera_config(tmp_path, broker, table, options)


def _command(config: Path, state_dir: Path) -> list[str]:
    return [str(STUDIO), "camera", "run", "--config", str(config), "--state-dir", str(state_dir)]


@pytest.mark.timeout(180)
async def test_a_second_camera_run_refuses_and_the_first_runs_on_undisturbed(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    config = _write_setup(tmp_path, deck_profile, broker, table_id)
    state = tmp_path / "state"
    topics = Topics(table_id)
    seen: list[tuple[str, object]] = []
    first = second = None
    async with MessageBus(broker, f"watch-{table_id}") as bus:
        async with (
            bus.subscribe(topics.availability("cam-1"), Availability) as availability,
            bus.subscribe(topics.health("cam-1"), DeviceHealth) as health,
            bus.subscribe(topics.camera_cards, CameraCard) as cards,
        ):
            await bus.wait_connected()

            async def record(subscription: Subscription[Any]) -> None:
                async for received in subscription:
                    seen.append((received.topic, received.payload))

            try:
                async with asyncio.TaskGroup() as group:
                    watchers = [group.create_task(record(s)) for s in (availability, health, cards)]
                    first = await asyncio.create_subprocess_exec(
                        *_command(config, state),
                        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                    )  # fmt: skip
                    async with asyncio.timeout(60):
                        while not any(
                            isinstance(p, Availability) and p.state == "online" for _, p in seen
                        ):
                            assert first.returncode is None, "the first camera stopped"
                            await asyncio.sleep(0.05)
                    await asyncio.sleep(1.0)
                    before = len(seen)

                    second = await asyncio.create_subprocess_exec(
                        *_command(config, state),
                        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                    )  # fmt: skip
                    try:
                        _, err_bytes = await asyncio.wait_for(second.communicate(), 30)
                    except TimeoutError:
                        second.kill()
                        _, err_bytes = await second.communicate()
                    err = err_bytes.decode()
                    await asyncio.sleep(1.0)  # a will or a late publish would arrive by now
                    after = seen[before:]
                    for watcher in watchers:
                        watcher.cancel()
            finally:
                for process in (second, first):
                    if process is not None and process.returncode is None:
                        process.send_signal(signal.SIGINT)
                        try:
                            await asyncio.wait_for(process.wait(), 20)
                        except TimeoutError:
                            process.kill()
                            await process.wait()
    assert first is not None and second is not None
    # Before: still running after 30 s, and "offline" twice a second, from both.
    assert second.returncode == 2, err[-3000:]
    lock = state / f"{table_id}__cam-1.run.lock"
    assert (
        f"error: cam-1 of table {table_id} is already run by another process "
        f"(lock {lock} held by pid {first.pid}); stop it first"
    ) in err
    assert "Traceback" not in err
    assert "running 1 cameras" not in err  # said only once its locks are taken
    assert after == []  # nothing from the second, and the first never went offline
    assert first.returncode == 0  # it ran until told to stop
