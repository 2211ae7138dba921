"""`studio config check` found by a new operator's review (2026-12-06).

One run did not explain every mistake: the checks beyond the model's (ports, cameras and
their files) ran only on a valid configuration, so a missing CA file, ``web.port = "x"``
and a preset ``clubhose`` hid the camera's missing files until a fourth run. It printed OK
for a broker and a PostgreSQL server on other machines without TLS; and some words were
pydantic's (``Extra inputs are not permitted``, a pattern) or hid the mistake (a broker
URL's path masked), and a serial port no device is at passed silently.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from calibration.deck_profile import PROFILE_FORMAT, PROFILE_VERSION, RANK_SIZE, SUIT_SIZE
from studio.cli import app

# A deck profile's header (studio config check reads it, not its templates).
DECK_HEADER = {
    "format": PROFILE_FORMAT,
    "version": PROFILE_VERSION,
    "rank_size": list(RANK_SIZE),
    "suit_size": list(SUIT_SIZE),
}

SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}
LOCAL_BROKER = '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'


def check(tmp_path: Path, text: str, *args: str) -> tuple[int, list[str]]:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", *args, str(path)], env={**env, **SECRETS})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line.removeprefix(f"{path}: ") for line in result.output.splitlines()]
    return result.exit_code, lines


def camera(device_id: str, options: str) -> str:
    return f'[[tables.devices]]\nid = "{device_id}"\nkind = "camera"\noptions = {{ {options} }}\n'


def test_one_run_reports_the_model_s_mistakes_and_the_cameras(tmp_path: Path) -> None:
    # The review's file: each of these hid the camera mistakes after it.
    text = (
        '[broker]\nurl = "mqtts://broker.studio.lan:8883"\n'
        '[broker.tls]\nca_certs = "/nowhere/ca.pem"\n'
        '[web]\nport = "x"\n'
        '[[tables]]\nid = "bj-1"\nruleset = "clubhose"\n'
        + camera("cam-1", 'deck = "deck.json", table = "table.json"')
        + '[[tables]]\nid = "bj-2"\n'
        + camera("cam-2", 'source = "0", deck = "/nowhere/deck2.json", table = "/nowhere/t2.json"')
    )
    code, lines = check(tmp_path, text)
    assert code == 2, lines
    expected = [
        "broker.tls.ca_certs: no such file: /nowhere/ca.pem",
        "web.port: Input should be a valid integer",
        "tables[0].ruleset: unknown preset 'clubhose'",
        # the bad table's camera, and the good table's
        "tables[0].devices[0].options.source: a camera needs one",
        "tables[0].devices[0].options.deck: no such file:",
        "tables[0].devices[0].options.table: no such file:",
        "tables[1].devices[0].options.deck: no such file: /nowhere/deck2.json",
        "tables[1].devices[0].options.table: no such file: /nowhere/t2.json",
    ]
    for words in expected:
        assert any(line.startswith(words) for line in lines), (words, lines)
    assert lines[-1] == "8 mistakes found; the warnings are listed once they are fixed"
    assert len(lines) == 9, lines


def test_a_bad_device_does_not_hide_its_neighbour_s_files(tmp_path: Path) -> None:
    text = (
        LOCAL_BROKER
        + '[[tables]]\nid = "bj-1"\n'
        + '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nbaudrate = 0\n'
        'port = "socket://127.0.0.1:9"\n'
        + camera("cam-1", 'source = "0", deck = "/nowhere/deck.json", table = "/nowhere/t.json"')
    )
    code, lines = check(tmp_path, text)
    assert code == 2, lines
    assert lines[0].startswith("tables[0].devices[0].baudrate: Input should be greater than 0")
    assert lines[1] == "tables[0].devices[1].options.deck: no such file: /nowhere/deck.json"
    assert lines[2] == "tables[0].devices[1].options.table: no such file: /nowhere/t.json"
    assert lines[3].startswith("3 mistakes found")


def test_one_mistake_is_one_line(tmp_path: Path) -> None:
    code, lines = check(tmp_path, LOCAL_BROKER + '[[tables]]\nid = "bj-1"\nruleset = "x"\n')
    assert code == 2 and len(lines) == 1, lines


REMOTE_BROKER = '[broker]\nurl = "mqtt://broker.studio.lan:1883"\n'
TABLE = '[[tables]]\nid = "bj-1"\n'


def test_a_broker_elsewhere_without_tls_or_credentials_is_warned_about(tmp_path: Path) -> None:
    code, lines = check(tmp_path, REMOTE_BROKER + TABLE)
    assert code == 0, lines
    assert any(
        line.startswith("warning: broker.url mqtt://broker.studio.lan:1883 is another machine")
        and "has no TLS" in line
        for line in lines
    ), lines
    assert any("no broker.username nor client certificate" in line for line in lines), lines
    assert lines[-1].startswith("OK with 2 warnings — 1 table(s)"), lines
    # --strict: a warning fails the check
    code, lines = check(tmp_path, REMOTE_BROKER + TABLE, "--strict")
    assert code == 2 and lines[-1] == "2 warnings found, refused by --strict", lines


@pytest.mark.parametrize(
    "broker",
    [
        LOCAL_BROKER,
        '[broker]\nurl = "mqtt://localhost:1883"\n',
        '[broker]\nurl = "mqtts://broker.studio.lan:8883"\nusername = "controller"\n',
    ],
)
def test_a_local_or_protected_broker_is_not(tmp_path: Path, broker: str) -> None:
    code, lines = check(tmp_path, broker + TABLE, "--strict")
    assert code == 0 and not any("warning" in line for line in lines), lines


def test_postgres_elsewhere_without_verified_tls_is_warned_about(tmp_path: Path) -> None:
    url = "postgresql://studio@db.studio.lan/studio"
    for query, given in (("", "no sslmode"), ("?sslmode=require", "sslmode=require")):
        text = f'{LOCAL_BROKER}[database]\nurl = "{url}{query}"\n{TABLE}'
        code, lines = check(tmp_path, text)
        assert code == 0, lines
        (warning,) = [line for line in lines if line.startswith("warning: database.url")]
        assert (
            f"db.studio.lan is another machine and the connection is not verified TLS ({given})"
            in warning
        )
        assert "?sslmode=verify-full" in warning


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://studio@db.studio.lan/studio?sslmode=verify-full",
        "postgresql://studio@db.studio.lan/studio?sslmode=verify-ca",
        "postgresql://studio@127.0.0.1/studio",
        "postgresql://studio@localhost:5432/studio",
        "postgresql://studio@/studio?host=/var/run/postgresql",
    ],
)
def test_postgres_here_or_verified_is_not(tmp_path: Path, url: str) -> None:
    code, lines = check(tmp_path, f'{LOCAL_BROKER}[database]\nurl = "{url}"\n{TABLE}', "--strict")
    assert code == 0, lines


def test_an_unknown_option_is_an_unknown_key_with_the_closest_match(tmp_path: Path) -> None:
    device = '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "socket://127.0.0.1:9"\n'
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + device + 'options = { protocl = "x" }\n')
    assert code == 2, lines
    assert lines == [
        "tables[0].devices[0]: options.protocl: unknown key (did you mean 'protocol'? a "
        "shoe's options are protocol, wire_id, host_id, handshake_timeout, gap_timeout, "
        "skew_tolerance)"
    ]


def test_a_currency_is_explained(tmp_path: Path) -> None:
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + 'currency = "eur"\n')
    assert code == 2
    assert lines == [
        "tables[0].currency: an ISO 4217 code of three capital letters, e.g. EUR; got 'eur'"
    ]


def test_an_empty_table_calibration_says_what_one_is(tmp_path: Path) -> None:
    (tmp_path / "table.json").write_text("{}")
    (tmp_path / "deck.json").write_text(json.dumps(DECK_HEADER))
    options = 'source = "0", deck = "deck.json", table = "table.json"'
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + camera("cam-1", options))
    assert code == 2
    (line,) = lines
    assert "not a table calibration (an empty object)" in line
    assert "studio calibrate table --image FRAME" in line and "studio-table-calibration" in line


def test_a_broker_url_s_path_is_shown(tmp_path: Path) -> None:
    code, lines = check(tmp_path, '[broker]\nurl = "mqtt://h:1883/studio"\n' + TABLE)
    assert code == 2
    assert "'mqtt://h:1883/studio'" in lines[0], lines


def _shoe(port: str) -> str:
    # A table with a shoe and no camera is single-source (else a warning of its own).
    return (
        "single_source = true\n"
        f'[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "{port}"\n'
        'options = { wire_id = "shoe-1" }\n'
    )


@pytest.mark.parametrize(
    ("port", "words"),
    [
        ("COM3", "COM3 is a Windows port name"),
        ("/dev/ttyUSB-nowhere", "no such device on this machine: /dev/ttyUSB-nowhere;"),
        ("ttyUSB0", "(a relative path is from the working directory)"),
    ],
)
def test_a_serial_port_with_no_device_is_warned_about(
    tmp_path: Path, port: str, words: str
) -> None:
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + _shoe(port))
    assert code == 0, lines  # the drivers keep retrying a port until the device is plugged
    (warning,) = [line for line in lines if line.startswith("warning:")]
    assert warning.startswith("warning: tables[0].devices[0].port (bj-1/shoe-1): ")
    assert words in warning


def test_a_file_is_no_serial_port(tmp_path: Path) -> None:
    (tmp_path / "port").write_text("")
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + _shoe(str(tmp_path / "port")))
    assert code == 0
    assert any("is not a serial device (not a character device)" in line for line in lines)


@pytest.mark.parametrize("port", ["/dev/null", "socket://127.0.0.1:9"])
def test_a_character_device_or_socket_is_a_port(tmp_path: Path, port: str) -> None:
    code, lines = check(tmp_path, LOCAL_BROKER + TABLE + _shoe(port), "--strict")
    assert code == 0, lines
