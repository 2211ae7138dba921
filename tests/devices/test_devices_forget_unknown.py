"""``studio drivers forget-device`` for a device the config does not have: a typo, said
"no learned wire id" and exit 0 before, so the device meant kept its wire id unnoticed."""

from __future__ import annotations

from pathlib import Path

from acme_support import SHOE_AND_SHUFFLER_CONFIG as CONFIG
from typer.testing import CliRunner

from studio.cli import app


def _forget(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["drivers", "forget-device", *args], env={})
    return result.exit_code, result.output


def test_a_device_not_in_the_config_is_refused_with_the_tables_devices(tmp_path: Path) -> None:
    config = tmp_path / "studio.toml"
    config.write_text(CONFIG)
    code, out = _forget("-t", "t1", "-d", "shoe-9", "--config", str(config))
    assert code == 2, out
    assert "t1/shoe-9: the device is not in the config" in out
    assert "the devices of t1: shoe-1, shuffler-1" in out
    assert "no learned wire id" not in out
    code, out = _forget("-t", "t9", "-d", "shoe-1", "--config", str(config))
    assert code == 2, out
    assert "no table 't9'" in out and "tables: t1" in out
    # A configured device with no state file where it looks: refused (was exit 0, "no
    # learned wire id", while drivers run with --state-dir kept it learned elsewhere).
    code, out = _forget("-t", "t1", "-d", "shoe-1", "--config", str(config))
    assert code == 2, out
    assert "t1/shoe-1: no state file" in out and "no learned wire id" not in out
    # One there that learned none: nothing to do, said, exit 0.
    state = tmp_path / "var" / "drivers"
    state.mkdir(parents=True)
    (state / "t1__shoe-1.json").write_text('{"wire_id": null}')
    code, out = _forget("-t", "t1", "-d", "shoe-1", "--config", str(config))
    assert code == 0, out
    assert "t1/shoe-1: no learned wire id" in out


def test_without_a_config_a_device_with_no_state_file_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "drivers"
    state.mkdir()
    (state / "t1__shoe-1.json").write_text('{"wire_id": null}')
    code, out = _forget("-t", "t1", "-d", "shoe-9", "--state-dir", str(state))
    assert code == 2, out
    assert f"t1/shoe-9: no state file {state / 't1__shoe-9.json'}" in out
    assert "devices with a state there: t1/shoe-1" in out
    code, out = _forget("-t", "t1", "-d", "shoe-1", "--state-dir", str(state))
    assert code == 0, out
    assert "no learned wire id" in out
