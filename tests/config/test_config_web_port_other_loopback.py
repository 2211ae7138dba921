"""The console on the broker's port at another loopback address is a warning, not a
refusal: 127.0.0.1:8000 and [::1]:8000 (or 127.0.0.2:8000) can each have a server. The
broker's very host (``localhost`` being 127.0.0.1 and ::1), or every address while the
broker is on this machine, is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}


def check(tmp_path: Path, broker: str, web: str) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text(f'[broker]\nurl = "{broker}"\n{web}[[tables]]\nid = "bj-1"\n')
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={**env, **SECRETS})
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("broker", "web"),
    [
        ("mqtt://[::1]:8000", ""),
        ("mqtt://localhost:8000", '[web]\nhost = "127.0.0.2"\n'),
    ],
)
def test_another_loopback_address_is_a_warning(tmp_path: Path, broker: str, web: str) -> None:
    code, output = check(tmp_path, broker, web)
    assert code == 0, output
    assert "warning: web.port 8000 is also the broker's port" in output
    assert "another loopback address" in output


@pytest.mark.parametrize(
    ("broker", "web"),
    [
        ("mqtt://127.0.0.1:8000", ""),
        ("mqtt://LOCALHOST:8000", '[web]\nhost = "localhost"\n'),
        ("mqtt://[::1]:8000", '[web]\nhost = "0.0.0.0"\n'),
        # localhost names 127.0.0.1: a warning until 2026-12-07, the console then refused
        ("mqtt://127.0.0.1:8000", '[web]\nhost = "localhost"\n'),
        ("mqtt://localhost:8000", ""),
    ],
)
def test_the_same_address_is_refused(tmp_path: Path, broker: str, web: str) -> None:
    code, output = check(tmp_path, broker, web)
    assert code == 2, output
    assert "web.port 8000 is the broker's port on the same machine" in output


def test_another_port_has_no_warning(tmp_path: Path) -> None:
    code, output = check(tmp_path, "mqtt://[::1]:1883", "")
    assert code == 0, output
    assert "broker's port" not in output
