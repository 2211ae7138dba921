"""NaN and infinity in the configuration file are refused as what they are.

TOML has `nan` and `inf`. Before, a bound with no upper limit let `inf` through (a device
with `heartbeat_timeout = inf` never went offline, however long it was silent), and `nan`
failed its bound with a message about the bound ("less than or equal to 8784").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

DEVICE = (
    '[[tables]]\nid = "t1"\n[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'
    'port = "socket://127.0.0.1:4001"\n'
)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (DEVICE + "heartbeat_timeout = inf\n", "tables[0].devices[0].heartbeat_timeout"),
        (DEVICE + "heartbeat_timeout = nan\n", "tables[0].devices[0].heartbeat_timeout"),
        ('[[tables]]\nid = "t1"\ncamera_window_seconds = nan\n', "tables[0].camera_window_seconds"),
        ("[console]\nsession_lifetime_hours = nan\n", "console.session_lifetime_hours"),
        ("[console]\nlockout_minutes = -inf\n", "console.lockout_minutes"),
    ],
)
def test_a_number_that_is_not_finite_is_one_line_naming_it(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"{path}: {where}: Input should be a finite number"


def test_finite_numbers_still_load(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(DEVICE + "heartbeat_timeout = 7.5\n")
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exit_code == 0, result.output
