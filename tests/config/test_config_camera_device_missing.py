"""`studio config check` warns of a camera device that is not there, as of a serial port.

Until 2026-12-07 a camera whose ``source`` named a device not plugged in (``/dev/v4l/by-id/...``
before the USB camera is enumerated) was a mistake, ``no such file, folder or device``, exit
status 2, and `studio camera run` refused to start; now the camera waits for it, so the check
warns (exit 0, 2 with ``--strict``) as it warns of a serial port no device is at. A recording
not there is still a mistake: a misspelt file is one clear error.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from calibration.table import TableCalibration, default_layout
from studio.cli import app

SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}
KEY = "tables[0].devices[0].options"
RELATIVE = "(a relative path is from the config file's folder)"


def _check(tmp_path: Path, source: str, *args: str) -> tuple[int, list[str]]:
    TableCalibration(np.eye(3), default_layout(), (1280, 720), "corners").save(
        tmp_path / "table.json"
    )
    path = tmp_path / "studio.toml"
    path.write_text(
        '[broker]\nurl = "mqtt://127.0.0.1:1883"\n[[tables]]\nid = "bj-1"\n'
        '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
        f'options = {{ source = "{source}", table = "table.json" }}\n'
    )
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", *args, str(path)], env={**env, **SECRETS})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, [line.removeprefix(f"{path}: ") for line in result.output.splitlines()]


def _nowhere_in_dev() -> str:
    path = f"/dev/v4l/by-id/usb-studio-test-{uuid.uuid4().hex[:12]}-video-index0"
    assert not os.path.lexists(path)
    return path


def test_a_camera_device_not_plugged_in_is_a_warning(tmp_path: Path) -> None:
    nowhere = _nowhere_in_dev()
    code, lines = _check(tmp_path, nowhere)
    # Before: exit 2, `...options.source: no such file, folder or device: /dev/v4l/...`.
    assert code == 0, lines
    warnings = [line for line in lines if line.startswith("warning:")]
    assert warnings == [
        f"warning: {KEY}.source: no such device on this machine: {nowhere}; studio camera "
        "run waits for it (offline, retried with backoff): plug it in, or check the spelling "
        "(ls /dev/v4l/by-id/ lists the cameras plugged in)"
    ]
    assert any(line.startswith("OK with 1 warning") for line in lines), lines
    code, lines = _check(tmp_path, nowhere, "--strict")
    assert code == 2, lines


def test_a_link_of_one_s_own_to_a_device_not_there_is_a_warning(tmp_path: Path) -> None:
    nowhere = _nowhere_in_dev()
    (tmp_path / "cam0").symlink_to(nowhere)
    code, lines = _check(tmp_path, "cam0")
    assert code == 0, lines
    (warning,) = [line for line in lines if line.startswith("warning:")]
    assert f"no such device on this machine: {nowhere} {RELATIVE}; studio camera" in warning


def test_a_recording_not_there_is_still_a_mistake(tmp_path: Path) -> None:
    (tmp_path / "clip.mp4").symlink_to(tmp_path / "recordings" / "round.mp4")
    for source, missing in (
        ("video0", tmp_path / "video0"),  # not under /dev: a file misspelt, not a device
        ("clip.mp4", tmp_path / "recordings" / "round.mp4"),
    ):
        code, lines = _check(tmp_path, source)
        assert code == 2, lines
        assert lines == [f"{KEY}.source: no such file, folder or device: {missing} {RELATIVE}"]
