"""A camera's frame deadline (``options.frame_timeout``): a default, and checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.config import load_config
from studio.errors import ConfigError

CAMERA = '[[tables]]\nid = "bj-1"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'


def _camera_timeout(tmp_path: Path, options: str) -> float:
    path = tmp_path / "studio.toml"
    path.write_text(f'{CAMERA}options = {{ source = "0"{options} }}\n')
    (device,) = load_config(path, environ={}).table("bj-1").devices
    return device.camera.frame_timeout


def test_a_camera_s_frame_timeout_has_a_default_and_is_checked(tmp_path: Path) -> None:
    assert _camera_timeout(tmp_path, "") == 5.0
    assert _camera_timeout(tmp_path, ", frame_timeout = 2.5") == 2.5
    for bad in ("0", "-1", '"soon"'):
        with pytest.raises(ConfigError, match=r"options\.frame_timeout"):
            _camera_timeout(tmp_path, f", frame_timeout = {bad}")
