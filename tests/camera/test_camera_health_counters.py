"""A camera's health reports count its opens and reads given up at their deadlines.

The service counted them (``open_timeouts``, ``stalls``) since the open deadline came
in, but ``studio camera run`` published only ``frames``, ``reconnects`` and
``unreadable_run``: a camera whose RTSP handshake kept hanging looked, in its health
report, like one that had merely reconnected. The camera runs as ``studio camera run``
runs it (:class:`CameraRunner`, its own bus on a real broker); its source is the virtual
camera behind an ``open`` that hangs the first time, as a camera that accepts the
connection and never answers does.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from camera_health import health_reports

from calibration.deck_profile import DeckProfile
from drivers.camera.runner import CameraRunner, build_cameras
from drivers.camera.sources import Image, VirtualCameraSource
from hwsim.camera.virtual import VirtualCamera
from studio.config import BrokerSettings, StudioConfig


class _OpenHangsOnce:
    """The runner's virtual camera, whose first ``open`` blocks until ``release`` is set."""

    def __init__(self, inner: VirtualCameraSource) -> None:
        self.inner = inner
        self.name = inner.name
        self.live = True
        self.release = threading.Event()
        self.opens = 0

    def open(self) -> None:
        self.opens += 1
        if self.opens == 1:
            self.release.wait()
        self.inner.open()

    def read(self) -> Image | None:
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()


def _camera(
    tmp_path: Path, deck_profile: DeckProfile, broker: BrokerSettings, table: str
) -> CameraRunner:
    # "virtual" is the simulator's camera with seed 0: the table calibration is its own.
    VirtualCamera(level="easy", seed=0).calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    options = {"source": "virtual", "deck": "deck.json", "table": "table.json", "open_timeout": 0.2}
    device = {"id": "cam-1", "kind": "camera", "options": options}
    config = StudioConfig.model_validate(
        {"broker": broker.model_dump(), "tables": [{"id": table, "devices": [device]}]}
    )
    # A health report goes out when something changes: here, a state folder that is a
    # file, so the first card's state cannot be saved and the camera says "degraded".
    (tmp_path / "state").write_text("not a folder")
    (runner,) = build_cameras(config, base_dir=tmp_path, state_dir=tmp_path / "state")
    return runner


async def test_a_camera_whose_open_timed_out_says_so_in_its_health_counters(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    runner = _camera(tmp_path, deck_profile, broker, table_id)
    assert isinstance(runner.source, VirtualCameraSource)
    runner.source.camera.place("KS", "seat:1")
    source = runner.source = _OpenHangsOnce(runner.source)
    async with health_reports(broker, table_id) as reports:
        try:
            async with asyncio.TaskGroup() as group:
                camera = group.create_task(runner.run(), name="camera")
                async with asyncio.timeout(30):
                    while runner.service is None or runner.service.open_timeouts < 1:
                        await asyncio.sleep(0.01)
                    # The open answers late: the next attempt takes it, frames flow.
                    source.release.set()
                    while "degraded" not in [r.status for r in reports]:
                        await asyncio.sleep(0.01)
                camera.cancel()
        finally:
            source.release.set()
    # "ok" once frames flow (test_camera_health_ok.py), then the first save failed.
    assert [(r.device, r.status) for r in reports] == [("cam-1", "ok"), ("cam-1", "degraded")]
    assert "could not save the camera state" in reports[1].reason
    counters = reports[1].counters
    assert counters["open_timeouts"] >= 1
    assert counters["stalls"] == 0
    assert set(counters) == {
        "frames",
        "reconnects",
        "unreadable_run",
        "open_timeouts",
        "stalls",
        "outside_zones",
    }
