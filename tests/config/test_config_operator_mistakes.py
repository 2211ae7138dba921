"""Mistakes a new operator makes in a configuration, and what `studio config check` says.

Each test is one realistic mistake: the message must name where it is (the file's key,
or the environment variable), say what is wrong, and the command must exit non-zero.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.table import TableCalibration, default_layout
from studio.cli import app
from studio.config import load_config
from studio.errors import ConfigError

TABLE = '[[tables]]\nid = "bj-1"\n'
BROKER = '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'


def write_table(path: Path) -> None:
    """A table calibration a camera can run with (config check reads it as camera run does)."""
    TableCalibration(np.eye(3), default_layout(), (1280, 720), "corners").save(path)


def write(tmp_path: Path, text: str, name: str = "studio.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def check(path: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_a_folder_given_as_the_file_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    code, output = check(tmp_path)
    assert code == 2, output
    assert f"{tmp_path}: cannot read" in output


def test_an_unknown_preset_is_caught_by_the_check(tmp_path: Path) -> None:
    path = write(tmp_path, TABLE + 'ruleset = "clubhose"\n')
    code, output = check(path)
    assert code == 2, output
    assert "tables[0].ruleset: unknown preset 'clubhose'" in output
    assert "classic6, clubhouse, majority_speed" in output


def test_a_bad_rule_override_is_caught_by_the_check(tmp_path: Path) -> None:
    spec = 'ruleset = { preset = "majority_speed", dealer = { hole_card = "uk" } }\n'
    with pytest.raises(ConfigError, match=r"tables\[0\]\.ruleset: .*dealer\.hole_card"):
        load_config(write(tmp_path, TABLE + spec), environ={})
    good = 'ruleset = { preset = "majority_speed", dealer = { hole_card = "eu", peek = "none" } }\n'
    assert load_config(write(tmp_path, TABLE + good), environ={}).tables[0].ruleset == {
        "preset": "majority_speed",
        "dealer": {"hole_card": "eu", "peek": "none"},
    }


def test_credentials_in_the_broker_url_are_refused_and_not_printed(tmp_path: Path) -> None:
    path = write(tmp_path, '[broker]\nurl = "mqtt://studio:Hunter2Pw@127.0.0.1:1883"\n')
    code, output = check(path)
    assert code == 2, output
    assert "broker.url" in output and "broker.username" in output
    assert "STUDIO_BROKER__PASSWORD" in output
    assert "Hunter2Pw" not in output


def test_an_option_a_serial_device_does_not_have_is_an_error(tmp_path: Path) -> None:
    device = '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'
    with pytest.raises(ConfigError, match=r"tables\[0\]\.devices\[0\]: options\.gap_timout"):
        load_config(write(tmp_path, TABLE + device + "options = { gap_timout = 1.0 }\n"), {})
    with pytest.raises(ConfigError, match=r"options\.handshake_timeout: Input should be greater"):
        load_config(write(tmp_path, TABLE + device + "options = { handshake_timeout = 0 }\n"), {})
    documented = (
        'options = { protocol = "sdl1-shoe", wire_id = "shoe-1", host_id = "host", '
        "handshake_timeout = 2.0, gap_timeout = 1.0, skew_tolerance = 2.0 }\n"
    )
    config = load_config(write(tmp_path, TABLE + device + documented), {})
    assert config.tables[0].devices[0].options["gap_timeout"] == 1.0


def test_secrets_written_in_the_file_are_warned_about(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        BROKER
        + 'password = "Hunter2Pw"\n[web]\nplatform_token = "tok-Hunter2-0123456789abcdef0123456789"\n',
    )
    code, output = check(path)
    assert code == 0, output
    assert "warning: broker.password is in the file" in output
    assert "STUDIO_BROKER__PASSWORD" in output
    assert "warning: web.platform_token is in the file" in output
    assert "Hunter2" not in output
    code, output = check(
        write(tmp_path, BROKER + TABLE), env={"STUDIO_BROKER__PASSWORD": "Hunter2Pw"}
    )
    assert code == 0 and "in the file" not in output and "Hunter2" not in output


def test_a_checkpoint_key_in_the_file_is_warned_about_and_a_short_one_refused(
    tmp_path: Path,
) -> None:
    key = "Hunter2-" + "0" * 32
    code, output = check(write(tmp_path, f'[database]\ncheckpoint_key = "{key}"\n' + TABLE))
    assert code == 0, output
    assert "warning: database.checkpoint_key is in the file" in output
    assert "STUDIO_DATABASE__CHECKPOINT_KEY" in output and "Hunter2" not in output
    code, output = check(
        write(tmp_path, TABLE), env={"STUDIO_DATABASE__CHECKPOINT_KEY": "Hunter2-short"}
    )
    assert code != 0 and "at least 32 characters" in output and "Hunter2" not in output


def test_a_config_without_a_broker_url_is_said_to_be_for_the_demo_only(tmp_path: Path) -> None:
    code, output = check(write(tmp_path, TABLE))
    assert code == 0, output
    assert "broker embedded" in output
    assert "controller/drivers/camera run need broker.url" in output


def test_duplicate_ids_read_plainly(tmp_path: Path) -> None:
    code, output = check(write(tmp_path, TABLE + TABLE))
    assert code == 2, output
    assert "tables: table ids must be unique: bj-1" in output
    assert "Value error" not in output


def test_devices_written_before_their_table_are_explained(tmp_path: Path) -> None:
    code, output = check(write(tmp_path, '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'))
    assert code == 2, output
    assert "[[tables]]" in output and "before" in output


def test_a_missing_tls_file_is_named_by_the_check(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    tls = f'[broker]\nurl = "mqtts://127.0.0.1:8883"\n[broker.tls]\nca_certs = "{ca}"\n'
    code, output = check(write(tmp_path, tls))
    assert code == 2, output
    assert f"broker.tls.ca_certs: no such file: {ca}" in output
    ca.write_text("a CA")
    code, output = check(write(tmp_path, tls))
    assert code == 0, output


@pytest.mark.parametrize(
    ("port", "why"),
    [
        ("socket://10.20.0.11", "expected socket://host:port"),
        ("socket://10.20.0.11:70000", "expected socket://host:port"),
        ("tcp://10.20.0.11:4001", "a device path or socket://host:port"),
    ],
)
def test_a_malformed_device_port_is_caught_by_the_check(
    tmp_path: Path, port: str, why: str
) -> None:
    device = f'[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "{port}"\n'
    code, output = check(write(tmp_path, TABLE + device))
    assert code == 2, output
    assert "tables[0].devices[0].port: " in output and why in output


def test_a_serial_device_without_a_port_is_refused_by_the_check(tmp_path: Path) -> None:
    devices = (
        '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'
        '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
        'options = { source = "0", table = "table.json" }\n'
    )
    write_table(tmp_path / "table.json")  # read as camera run reads it
    code, output = check(write(tmp_path, BROKER + TABLE + devices))
    assert code == 2, output
    assert "tables[0].devices[0]: a shoe needs a port" in output
    assert "cam-1" not in output  # a camera reads options.source instead
    code, output = check(write(tmp_path, BROKER + TABLE + devices.replace(
        'kind = "shoe"\n', 'kind = "shoe"\nport = "/dev/ttyUSB0"\n'
    )))  # fmt: skip
    assert code == 0, output


def test_a_serial_device_told_apart_only_by_a_renumberable_port_is_warned_of(
    tmp_path: Path,
) -> None:
    """/dev/ttyUSB0 after a reboot may be another table's shoe; a by-id path or a wire_id
    tells the device itself."""
    device = '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "{port}"\n'
    code, output = check(write(tmp_path, BROKER + TABLE + device.format(port="/dev/ttyUSB0")))
    assert code == 0, output
    assert "bj-1/shoe-1" in output and "/dev/serial/by-id/" in output
    by_id = device.format(port="/dev/serial/by-id/usb-ACME_Shoe_SN123-if00")
    code, output = check(write(tmp_path, BROKER + TABLE + by_id))
    assert code == 0 and "renumbered" not in output, output
    pinned = device.format(port="/dev/ttyUSB0") + 'options = { wire_id = "SN123" }\n'
    code, output = check(write(tmp_path, BROKER + TABLE + pinned))
    assert code == 0 and "renumbered" not in output, output


def test_a_camera_that_camera_run_would_refuse_is_refused_by_the_check(tmp_path: Path) -> None:
    camera = '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\noptions = { barcodes = "off" }\n'
    code, output = check(write(tmp_path, BROKER + TABLE + camera))
    assert code == 2, output
    where = "tables[0].devices[0].options"
    assert f"{where}.source: a camera needs one" in output
    assert f"{where}.table: a camera needs its table calibration" in output
    assert f"{where}: nothing to identify cards with" in output
