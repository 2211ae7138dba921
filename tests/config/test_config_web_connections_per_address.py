"""``web.max_connections_per_address``: the web port's cap on one client address's
connections (studio.web.server), 200 by default, 0 for none (behind a reverse proxy, whose
clients all have its address). Added 2026-12-07: before, the key was unknown, and one
host could hold every connection the server serves."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config

MESSAGE = (
    "web.max_connections_per_address: a number of connections one client address may hold "
    "at once, or 0 for no cap per address (behind a reverse proxy); got "
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    return path


def check(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize(("value", "count"), [("0", 0), ("500", 500), ("3.0", 3)])
def test_the_file_sets_it(tmp_path: Path, value: str, count: int) -> None:
    path = write(tmp_path, f"[web]\nmax_connections_per_address = {value}\n")
    assert load_config(path, environ={}).web.max_connections_per_address == count
    code, output = check(path)
    assert code == 0, output


def test_the_default_and_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    assert load_config(path, environ={}).web.max_connections_per_address == 200
    environ = {"STUDIO_WEB__MAX_CONNECTIONS_PER_ADDRESS": "0"}
    assert load_config(path, environ=environ).web.max_connections_per_address == 0


@pytest.mark.parametrize(
    ("value", "shown"),
    [("-1", "-1"), ("2.5", "2.5"), ("true", "true"), ('"many"', "'many'")],
)
def test_a_bad_value_is_one_clear_line_of_the_check(tmp_path: Path, value: str, shown: str) -> None:
    path = write(tmp_path, f"[web]\nmax_connections_per_address = {value}\n")
    code, output = check(path)
    assert code == 2, output
    assert output.strip() == f"{path}: {MESSAGE}{shown}"
