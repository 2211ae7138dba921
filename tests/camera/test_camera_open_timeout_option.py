"""A camera's open deadline (``options.open_timeout``): a default, checked, and handed to
both the service's deadline and OpenCV's own for a URL."""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest

from drivers.camera.runner import build_cameras
from drivers.camera.sources import VideoCaptureSource
from hwsim.camera.virtual import VirtualCamera
from studio.config import load_config
from studio.errors import ConfigError

CAMERA = '[[tables]]\nid = "bj-1"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'


def _write(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(f"{CAMERA}options = {{ {options} }}\n")
    return path


def test_a_camera_s_open_timeout_has_a_default_and_is_checked(tmp_path: Path) -> None:
    def timeout(options: str) -> float:
        (device,) = load_config(_write(tmp_path, options), environ={}).table("bj-1").devices
        return device.camera.open_timeout

    assert timeout('source = "0"') == 10.0
    assert timeout('source = "0", open_timeout = 2.5') == 2.5
    for bad in ("0", "-1", '"soon"'):
        with pytest.raises(ConfigError, match=r"options\.open_timeout"):
            timeout(f'source = "0", open_timeout = {bad}')
    with pytest.raises(
        ConfigError, match=r"options\.open_timout: unknown key \(did you mean 'open_timeout'\?"
    ):
        timeout('source = "0", open_timout = 2')


def test_the_open_and_frame_deadlines_reach_opencv_for_a_url(tmp_path: Path) -> None:
    VirtualCamera(level="easy", seed=1).calibration().save(tmp_path / "table.json")
    path = _write(
        tmp_path,
        'source = "rtsp://camera.invalid/stream1", table = "table.json", barcodes = "zxing", '
        "open_timeout = 2.5, frame_timeout = 1.5",
    )
    (camera,) = build_cameras(load_config(path, environ={}), base_dir=tmp_path)
    source = camera.source
    assert isinstance(source, VideoCaptureSource)
    assert (source.open_timeout, source.read_timeout) == (2.5, 1.5)
    assert source._deadlines() == [
        cv2.CAP_PROP_OPEN_TIMEOUT_MSEC,
        2500,
        cv2.CAP_PROP_READ_TIMEOUT_MSEC,
        1500,
    ]
    # A device index keeps its backend's own deadlines (V4L2 takes no such parameters).
    assert VideoCaptureSource(0, open_timeout=2.5, read_timeout=1.5)._deadlines() == []
