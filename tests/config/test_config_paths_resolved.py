"""Paths ``studio config check`` prints for a camera's files, given a relative config path
(an operator's walk, 2026-12-07): ``no such file: ../etc/deck.json (a relative path is
from the config file's folder)`` read as a contradiction (the path shown was from the
working directory), and the notes said ``/srv/wd/../etc/deck.json``. Both are now the path
resolved. Run as the operator does: a real process, from a working folder beside ``etc``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest import MonkeyPatch

from studio.config import load_config
from studio.config.cli import resolved_paths

REPO = Path(__file__).resolve().parents[2]
SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}
CONFIG = """\
[broker]
url = "mqtt://127.0.0.1:1883"

[[tables]]
id = "bj-1"

[[tables.devices]]
id = "cam-1"
kind = "camera"
options = { source = "clip.mp4", deck = "deck.json", table = "table.json" }
"""


def check(cwd: Path, path: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "studio.cli", "config", "check", path],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{REPO / 'hw-sim'}", **SECRETS},
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (done.stdout + done.stderr).splitlines()


def test_a_camera_file_mistake_names_the_file_resolved(tmp_path: Path) -> None:
    etc, wd = tmp_path / "etc", tmp_path / "wd"
    etc.mkdir()
    wd.mkdir()
    (etc / "studio.toml").write_text(CONFIG)
    code, lines = check(wd, "../etc/studio.toml")
    assert code == 2, lines
    relative = " (a relative path is from the config file's folder)"
    key = "../etc/studio.toml: tables[0].devices[0].options"
    assert f"{key}.deck: no such file: {etc / 'deck.json'}{relative}" in lines, lines
    assert f"{key}.table: no such file: {etc / 'table.json'}{relative}" in lines, lines
    source = f"{key}.source: no such file, folder or device: {etc / 'clip.mp4'}{relative}"
    assert source in lines, lines


def test_the_notes_name_the_files_resolved(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    # The notes come once the files are valid; what they say is this function's.
    etc, wd = tmp_path / "etc", tmp_path / "wd"
    etc.mkdir()
    wd.mkdir()
    (etc / "studio.toml").write_text(CONFIG)
    monkeypatch.chdir(wd)
    config = load_config(Path("../etc/studio.toml"), environ={})
    notes = resolved_paths(config, Path("../etc"))
    assert f"note: tables[0].devices[0].options.deck: deck.json is {etc / 'deck.json'} " in (
        "\n".join(notes) + " "
    ), notes
    assert not [note for note in notes if "/../" in note], notes
