"""``studio drivers forget-device`` with drivers run from a ``--state-dir`` (the layout of
docs/operations.md). Given ``--config`` alone it looked in ``var/drivers`` beside the
config, found no state file, said ``no learned wire id in ...`` and exit 0, and created
that folder and a ``.lock`` file there (``/etc/studio/var/drivers`` in production): the
learned id stayed, and the replacement device went on being refused. A missing state file
is now refused (exit 2), naming where it looked and the ``--state-dir`` to give, and
nothing is created to find that out. Run as the operator does: a real ``studio`` process
from a working directory, with a relative ``--config``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acme_support import SHOE_AND_SHUFFLER_CONFIG as CONFIG

REPO = Path(__file__).resolve().parents[2]

LEARNED = {"wire_id": "SN-A", "published": 7}


def _forget(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio.cli", "drivers", "forget-device", "-t", "t1", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{REPO / 'hw-sim'}"},
    )


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``etc/studio.toml`` and the drivers' state in ``wd/drivers`` (``--state-dir``)."""
    etc, wd = tmp_path / "etc", tmp_path / "wd"
    etc.mkdir()
    (etc / "studio.toml").write_text(CONFIG)
    state = wd / "drivers"
    state.mkdir(parents=True)
    (state / "t1__shoe-1.json").write_text(json.dumps(LEARNED))
    return etc, wd, state


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_config_alone_refuses_where_the_drivers_keep_no_state(tmp_path: Path) -> None:
    etc, wd, state = _layout(tmp_path)
    done = _forget(wd, "-d", "shoe-1", "--config", "../etc/studio.toml")
    assert done.returncode == 2, (done.stdout, done.stderr)
    looked = etc / "var" / "drivers" / "t1__shoe-1.json"
    # Where it looked, resolved (was .../wd/../etc/var/drivers/...), and what to give.
    assert f"no state file {looked}" in done.stderr, done.stderr
    assert "/../" not in done.stderr, done.stderr
    assert "give the same --state-dir the drivers run with" in done.stderr, done.stderr
    assert "no learned wire id" not in done.stdout + done.stderr
    # Nothing made in the config's folder (was var/drivers/t1__shoe-1.json.lock).
    assert _files(etc) == ["studio.toml"]
    assert json.loads((state / "t1__shoe-1.json").read_text()) == LEARNED

    # The same --state-dir as the drivers: forgotten.
    done = _forget(wd, "-d", "shoe-1", "--config", "../etc/studio.toml", "--state-dir", "drivers")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"forgetting wire id 'SN-A' ({state / 't1__shoe-1.json'})" in done.stdout
    saved = json.loads((state / "t1__shoe-1.json").read_text())
    assert (saved["wire_id"], saved["forgotten"], saved["published"]) == (None, "SN-A", 7)


def test_a_default_state_dir_holding_other_devices_is_not_written_to(tmp_path: Path) -> None:
    etc, wd, _ = _layout(tmp_path)
    default = etc / "var" / "drivers"
    default.mkdir(parents=True)
    (default / "t1__shuffler-1.json").write_text(json.dumps({"wire_id": "SN-S"}))
    done = _forget(wd, "-d", "shoe-1", "--config", "../etc/studio.toml")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "devices with a state there: t1/shuffler-1" in done.stderr, done.stderr
    assert _files(default) == ["t1__shuffler-1.json"]


def test_a_state_dir_without_the_device_does_not_send_to_config_alone(tmp_path: Path) -> None:
    _, wd, _ = _layout(tmp_path)
    done = _forget(wd, "-d", "shoe-1", "--state-dir", "nonexistent")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"no state file {wd / 'nonexistent' / 't1__shoe-1.json'}" in done.stderr
    # Was "give --config FILE to check the device against the config": the form that
    # passed silently.
    assert "give --config FILE" not in done.stderr, done.stderr
    assert "give the same --state-dir the drivers run with" in done.stderr, done.stderr
    assert not (wd / "nonexistent").exists()
