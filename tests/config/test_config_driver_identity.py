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
