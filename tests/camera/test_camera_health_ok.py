"""A working camera says its health is ``ok`` once its frames flow (an operations review).

The camera service reported health only after a degradation (five cards unreadable in a
row, a state file it could not save), so REST and the console showed a camera that worked
from its start as ``unknown`` for good. It says ``ok`` once now, when frames first flow;
not each frame, nor again after a reconnection, nor while it is degraded."""

from __future__ import annotations

import asyncio
from pathlib import Path

from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import UNREADABLE_RUN_WARN, CameraService
from drivers.camera.sources import VirtualCameraSource
from drivers.state import StateFile
from hwsim.camera.virtual import VirtualCamera


def _service(
    cam: VirtualCamera, profile: DeckProfile, out: ServiceOutputs, state: StateFile | None
) -> CameraService:
    return CameraService(
        VirtualCameraSource(cam),
        Recogniser(profile, cam.calibration()),
        out.publish,
        device="cam-1",
        state=state,
        on_availability=out.announce,
        on_health=out.report,
    )


async def _until(service: CameraService, done: object) -> None:
    task = asyncio.create_task(service.run())
    async with asyncio.timeout(60):
        while not done() and not task.done():  # type: ignore[operator]
            await asyncio.sleep(0.01)
    service.stop()
    await task


def test_a_working_camera_says_ok_once_its_frames_flow(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    out = ServiceOutputs()
    service = _service(cam, profile, out, None)
    cam.place("7H", "seat:1")
    asyncio.run(_until(service, lambda: len(out.cards) >= 1 and service.frames >= 20))
    assert out.cards[0].card == "7H"
    assert out.health == [("ok", "frames flowing")]  # once, for many frames
    assert out.availability == [True]
    assert service.health == "ok"


def test_a_camera_degraded_before_its_restart_does_not_say_ok_on_frames_alone(
    profile: DeckProfile, tmp_path: Path
) -> None:
    state = StateFile(tmp_path / "cam.json")
    state.save({"seq": 10, "on_table": [], "unreadable_run": UNREADABLE_RUN_WARN})
    cam = VirtualCamera(level="easy", seed=12)
    out = ServiceOutputs()
    service = _service(cam, profile, out, state)
    asyncio.run(_until(service, lambda: service.frames >= 5))
    assert out.health == []  # still degraded: "ok" waits for a card read
