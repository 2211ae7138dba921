"""What `studio config check` (and every process's config load) says of a serial device's
identity on the wire and on the broker: the ids its frames carry, its MQTT client id and
state file, its port and its clock tolerance (docs/devices.md, 4.5).

Each of these was accepted before, and showed only at run time: a driver retrying for
ever, two drivers knocking each other off the broker, one table's cards published as
another's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config
from studio.errors import ConfigError

BROKER = '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'


def table(table_id: str, *devices: str) -> str:
    return f'[[tables]]\nid = "{table_id}"\n' + "".join(devices)


def device(device_id: str, port: str, kind: str = "shoe", options: str = "") -> str:
    text = f'[[tables.devices]]\nid = "{device_id}"\nkind = "{kind}"\nport = "{port}"\n'
    return text + (f"options = {{ {options} }}\n" if options else "")


def check(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text(BROKER + text)
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("option", "value"),
    [("host_id", "a,b"), ("host_id", "my host"), ("host_id", "x" * 300), ("wire_id", "shoe*1")],
)
def test_an_id_sdl1_frames_cannot_carry_is_refused(tmp_path: Path, option: str, value: str) -> None:
    # Before: "OK"; at run time the device could not parse the HELLO ("a,b") or the driver
    # could not write it ("frame too long"), retried for ever; a wire id no frame can carry
    # refused every device that answered.
    code, output = check(
        tmp_path,
        table("t1", device("shoe-1", "/dev/serial/by-id/a", options=f'{option} = "{value}"')),
    )
    assert code == 2, output
    assert f"tables[0].devices[0]: options.{option}: " in output
    assert "is not an SDL/1 device id" in output
    assert "1 to 32 letters, digits, '_', '.' or '-'" in output
    assert "x" * 41 not in output  # a long one is shortened


def test_ids_within_the_grammar_are_taken(tmp_path: Path) -> None:
    options = f'host_id = "{"h" * 32}", wire_id = "SIM-t1.shoe_1"'
    code, output = check(
        tmp_path, table("t1", device("shoe-1", "/dev/serial/by-id/a", options=options))
    )
    assert code == 0, output


def test_devices_whose_client_ids_or_state_files_collide_are_refused(tmp_path: Path) -> None:
    # Before: "OK"; both drivers then connected as studio-drv-rvw-a-b-c, each knocking the
    # other off the broker (with a state dir the start was refused naming its own pid).
    code, output = check(
        tmp_path,
        table("rvw-a-b", device("c", "/dev/serial/by-id/a"))
        + table("rvw-a", device("b-c", "/dev/serial/by-id/b")),
    )
    assert code == 2, output
    assert (
        "tables[0].devices[0] (rvw-a-b/c) and tables[1].devices[0] (rvw-a/b-c) would have "
        "the same MQTT client id 'drv-rvw-a-b-c'"
    ) in output
    code, output = check(
        tmp_path,
        table("a__b", device("c", "/dev/serial/by-id/a"))
        + table("a", device("b__c", "/dev/serial/by-id/b")),
    )
    assert code == 2, output
    assert "(a__b/c) and tables[1].devices[0] (a/b__c) would have the same state file" in output
    assert "'a__b__c.json'" in output
    # Config load refuses it too: every process reads the file through it.
    path = tmp_path / "studio.toml"
    with pytest.raises(ConfigError, match=r"tables: tables\[0\]\.devices\[0\] \(a__b/c\) and"):
        load_config(path, environ={})


def test_a_camera_and_a_serial_device_may_share_the_joined_name(tmp_path: Path) -> None:
    # Their client ids differ (cam-, drv-), and drivers and cameras have state dirs of
    # their own.
    path = tmp_path / "studio.toml"
    camera = '[[tables.devices]]\nid = "c"\nkind = "camera"\n'
    path.write_text(
        BROKER + table("a-b", camera) + table("a", device("b-c", "/dev/serial/by-id/b"))
    )
    assert len(list(load_config(path, environ={}).devices())) == 2


@pytest.mark.parametrize("tolerance", ["0", "0.1", "-1"])
def test_a_skew_tolerance_below_the_line_delay_is_refused(tmp_path: Path, tolerance: str) -> None:
    # Before: 0 was "OK"; the driver's health then flapped ok/degraded with each heartbeat
    # and stamped sound cards as "not a possible time".
    code, output = check(
        tmp_path,
        table(
            "t1", device("shoe-1", "/dev/serial/by-id/a", options=f"skew_tolerance = {tolerance}")
        ),
    )
    assert code == 2, output
    assert "options.skew_tolerance: must be at least 0.5 seconds" in output
    assert "health flap" in output
    code, output = check(
        tmp_path,
        table("t1", device("shoe-1", "/dev/serial/by-id/a", options="skew_tolerance = 0.5")),
    )
    assert code == 0, output


def test_one_port_given_to_two_devices_is_refused(tmp_path: Path) -> None:
    # Before: "OK"; at run time one driver took the port and the other kept failing, or
    # one table's shoe cards went out as the other table's.
    code, output = check(
        tmp_path,
        table(
            "t1",
            device("shoe-1", "/dev/ttyUSB0"),
            device("shuffler-1", "/dev//ttyUSB0", "shuffler"),
        )
        + table("t2", device("shoe-1", "/dev/ttyUSB0")),
    )
    assert code == 2, output
    assert (
        "tables[0].devices[0] (t1/shoe-1) and tables[0].devices[1] (t1/shuffler-1) have the "
        "same port '/dev//ttyUSB0'"
    ) in output
    assert "tables[0].devices[0] (t1/shoe-1) and tables[1].devices[0] (t2/shoe-1)" in output
    code, output = check(
        tmp_path,
        table("t1", device("shoe-1", "socket://Adapter.local:7001"))
        + table("t2", device("shoe-1", "socket://adapter.local:7001")),
    )
    assert code == 2, output
    assert "(t1/shoe-1) and tables[1].devices[0] (t2/shoe-1) have the same port" in output
    path = tmp_path / "studio.toml"
    with pytest.raises(ConfigError, match="have the same port"):
        load_config(path, environ={})


def test_other_ports_and_portless_devices_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    camera = '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
    path.write_text(
        BROKER
        + table(
            "t1", device("shoe-1", "socket://adapter:7001"), device("cut-1", "", "cutcard"), camera
        )
        + table(
            "t2", device("shoe-1", "socket://adapter:7002"), device("cut-1", "", "cutcard"), camera
        )
    )
    assert len(list(load_config(path, environ={}).devices())) == 6
