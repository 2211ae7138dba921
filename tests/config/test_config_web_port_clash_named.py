"""``studio config check`` and the console on the broker's port (an operator's walk,
2026-12-07). ``localhost`` was taken for another loopback address than 127.0.0.1, a
warning, though the controller then cannot listen (it binds every address ``localhost``
names). The clash was a check of the whole model, run only once every other setting was
valid: with any other mistake it was not reported (each fix showed a new mistake), and
its line began ``(top level):``, naming neither the setting nor the variable that set it.
Run as the operator does: a real ``studio`` process, settings in the file or variables."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}
TABLE = '[[tables]]\nid = "bj-1"\nsingle_source = true\n'


def check(path: Path, **variables: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "studio.cli", "config", "check", str(path)],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": f"{REPO}:{REPO / 'hw-sim'}",
            **SECRETS,
            **variables,
        },
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (done.stdout + done.stderr).splitlines()


def _port_taken_on_loopback() -> tuple[socket.socket, int]:
    """A listener on 127.0.0.1 (the broker's address), on a free port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server, server.getsockname()[1]


def test_localhost_is_the_brokers_127_0_0_1_and_the_variables_are_named(tmp_path: Path) -> None:
    server, port = _port_taken_on_loopback()
    with server:
        # What the controller meets: localhost names 127.0.0.1, whose port is taken.
        with pytest.raises(OSError), socket.create_server(("localhost", port)):
            pass
        path = tmp_path / "studio.toml"
        path.write_text(f'[broker]\nurl = "mqtt://127.0.0.1:{port}"\n{TABLE}')
        code, lines = check(path, STUDIO_WEB__HOST="localhost", STUDIO_WEB__PORT=str(port))
    assert code == 2, lines
    assert not [line for line in lines if "warning" in line], lines
    [line] = [line for line in lines if "broker's port" in line]
    assert line.startswith(f"{path} with STUDIO_WEB__HOST, STUDIO_WEB__PORT: web: "), line
    assert f"web.port {port} is the broker's port on the same machine" in line, line
    assert "(top level)" not in line


@pytest.mark.parametrize(
    ("file", "variables", "named"),
    [
        # The broker's URL by a variable, the web port in the file (default host 127.0.0.1).
        (
            "[web]\nport = 1883\n",
            {"STUDIO_BROKER__URL": "mqtt://localhost:1883"},
            "STUDIO_BROKER__URL",
        ),
        (
            '[broker]\nurl = "mqtt://localhost:1883"\n[web]\nhost = "localhost"\nport = 1883\n',
            {},
            "",
        ),
        ('[broker]\nurl = "mqtt://[::1]:1883"\n[web]\nhost = "localhost"\nport = 1883\n', {}, ""),
    ],
)
def test_localhost_on_either_side_is_refused(
    tmp_path: Path, file: str, variables: dict[str, str], named: str
) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(file + TABLE)
    code, lines = check(path, **variables)
    assert code == 2, lines
    [line] = [line for line in lines if "broker's port" in line]
    origin = f"{path} with {named}" if named else str(path)
    assert line.startswith(f"{origin}: web: web.port 1883 is the broker's port"), line


def test_the_clash_is_reported_with_every_other_mistake(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(
        '[broker]\nurl = "mqtt://127.0.0.1:1883"\nkeepalve = 30\n'
        '[web]\nport = 1883\n[console]\nlockout_minutes = "x"\n'
        '[[tables]]\nid = "bj-1"\nruleset = "clubhose"\n'
    )
    code, lines = check(path)
    assert code == 2, lines
    assert any("broker.keepalve: unknown key" in line for line in lines), lines
    assert any("tables[0].ruleset: unknown preset 'clubhose'" in line for line in lines), lines
    assert any("console.lockout_minutes" in line for line in lines), lines
    assert any(f"{path}: web: web.port 1883 is the broker's port" in line for line in lines), lines
    assert lines[-1].startswith(f"{path}: 4 mistakes found"), lines
