"""docs/devices.md 5.4 as an operator follows it (an operator's walk, 2026-12-07): the
``hwsim run --config-out`` file without ``--camera`` has tables with no camera and
``single_source`` unset, every card a misscan that pauses the table, and the walk-through
went straight on as if it were playable; it now says what the check warns and what to add.
Here the real ``hwsim run`` writes the file, and ``studio config check`` reads it before
and after the change the section gives."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "devices.md"
ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{REPO / 'hw-sim'}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config_out(folder: Path) -> Path:
    out = folder / "var" / "hwsim" / "studio.toml"
    args = ["--tables", "1", "--dir", "var/hwsim", "--http-port", str(_free_port())]
    hwsim = subprocess.Popen(
        [sys.executable, "-m", "hwsim.cli", "run", *args, "--config-out", str(out)],
        cwd=folder,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert hwsim.stdout is not None
        deadline = time.monotonic() + 60
        for line in hwsim.stdout:  # the file is written before this line
            if line.startswith("control API on") or time.monotonic() > deadline:
                break
    finally:
        hwsim.send_signal(signal.SIGINT)
        hwsim.wait(30)
    assert out.is_file()
    return out


def _check(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "studio.cli", "config", "check", str(path)],
        cwd=path.parent,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_config_out_section_says_what_a_playable_config_needs(tmp_path: Path) -> None:
    doc = " ".join(DOC.read_text().split())
    section = doc[doc.index("### 5.4 CLI") : doc.index("### 5.5")]
    out = _config_out(tmp_path)
    said = _check(out)
    # The warning the section quotes is the check's, word for word.
    quoted = re.search(r"`(tables\[0\] \(t1\): no camera device[^`]*)`", section)
    assert quoted is not None, section
    assert f"warning: {quoted[1]}" in said, said
    # What the section says to add makes it go.
    assert "add `single_source = true` under each `[[tables]]`" in section, section
    out.write_text(out.read_text().replace('id = "t1"\n', 'id = "t1"\nsingle_source = true\n', 1))
    assert "misscan" not in _check(out)
    # And the broker, which the file holds only with --broker-url.
    assert "error: broker.url is not set" in section, section
