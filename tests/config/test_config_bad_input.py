"""Bad input to the commands that read a configuration: one clear line, never a traceback.

A file saved in Latin-1 or with a byte-order mark, a camera file the config names that is
not there, a config without tables, `studio rtp --table` without a config at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_config_operator_mistakes import BROKER, TABLE, check, write_table
from typer.testing import CliRunner

from calibration.deck_profile import PROFILE_FORMAT, PROFILE_VERSION, RANK_SIZE, SUIT_SIZE
from studio.cli import app
from studio.config import load_config
from studio.errors import ConfigError

# A deck profile's header (studio config check reads it, not its templates).
DECK_HEADER = {
    "format": PROFILE_FORMAT,
    "version": PROFILE_VERSION,
    "rank_size": list(RANK_SIZE),
    "suit_size": list(SUIT_SIZE),
}

CAMERA = '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'


def write_bytes(tmp_path: Path, data: bytes, name: str = "studio.toml") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- 1. a file that is not UTF-8 ----------------------------------------------------------


def test_a_latin_1_byte_in_a_comment_is_named_with_its_position(tmp_path: Path) -> None:
    data = b"# caf\xe9 tables\n" + (BROKER + TABLE).encode()
    path = write_bytes(tmp_path, data)
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert str(caught.value) == (
        f"{path}: not UTF-8 text (byte 0xe9 at position 5, line 1); save it as UTF-8"
    )
    code, output = check(path)
    assert code == 2, output
    assert output.strip() == str(caught.value)
    assert "Traceback" not in output


def test_a_latin_1_byte_in_a_string_gives_its_line(tmp_path: Path) -> None:
    data = (BROKER + TABLE).encode() + b'ruleset = "clubh\xf6use"\n'
    path = write_bytes(tmp_path, data)
    position = data.index(b"\xf6")
    with pytest.raises(ConfigError, match=rf"byte 0xf6 at position {position}, line 5\)"):
        load_config(path, environ={})


def test_a_utf_16_file_is_told_to_be_saved_as_utf_8(tmp_path: Path) -> None:
    # Notepad's "Unicode" is UTF-16 with a byte-order mark.
    path = write_bytes(tmp_path, TABLE.encode("utf-16"))
    with pytest.raises(ConfigError, match=r"UTF-16 text, not UTF-8; save it as UTF-8"):
        load_config(path, environ={})


def test_every_command_that_loads_the_config_says_so_without_a_traceback(tmp_path: Path) -> None:
    # A real process, as the operator runs it: no traceback on stderr, the config's exit 2.
    path = write_bytes(tmp_path, b"# caf\xe9\n" + (BROKER + TABLE).encode())
    for command in (
        ["controller", "run", "--config", str(path)],
        ["rtp", "--table", "bj-1", "--config", str(path)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "studio.cli", *command],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 2, (command, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        assert "not UTF-8 text (byte 0xe9 at position 5, line 1)" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# -- 2. a byte-order mark ------------------------------------------------------------------


def test_a_utf_8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, b"\xef\xbb\xbf" + (BROKER + TABLE).encode())
    assert [table.id for table in load_config(path, environ={}).tables] == ["bj-1"]
    code, output = check(path)
    assert code == 0, output
    assert "1 table(s)" in output


def test_a_bad_byte_after_a_byte_order_mark_is_counted_from_the_file_s_start(
    tmp_path: Path,
) -> None:
    path = write_bytes(tmp_path, b"\xef\xbb\xbf# \xe9\n" + TABLE.encode())
    with pytest.raises(ConfigError, match=r"byte 0xe9 at position 5, line 1\)"):
        load_config(path, environ={})


# -- 3a. files a camera names --------------------------------------------------------------


def camera_config(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(BROKER + TABLE + CAMERA + f"options = {{ {options} }}\n")
    return path


def test_a_missing_deck_profile_and_table_calibration_are_mistakes(tmp_path: Path) -> None:
    path = camera_config(tmp_path, 'source = "0", deck = "deck.json", table = "/nowhere/t.json"')
    code, output = check(path)
    assert code == 2, output
    assert output.splitlines() == [
        f"{path}: tables[0].devices[0].options.deck: no such file: {tmp_path / 'deck.json'} "
        "(a relative path is from the config file's folder)",
        f"{path}: tables[0].devices[0].options.table: no such file: /nowhere/t.json",
        f"{path}: 2 mistakes found; the warnings are listed once they are fixed",
    ]


def test_a_folder_given_as_a_camera_file_is_a_mistake(tmp_path: Path) -> None:
    (tmp_path / "deck.json").mkdir()
    write_table(tmp_path / "table.json")
    path = camera_config(tmp_path, 'source = "0", deck = "deck.json", table = "table.json"')
    code, output = check(path)
    assert code == 2, output
    assert output.splitlines() == [
        f"{path}: tables[0].devices[0].options.deck: {tmp_path / 'deck.json'} is a folder, "
        "not a file"
    ]


def test_a_missing_video_file_source_is_a_mistake_a_url_or_index_is_not(tmp_path: Path) -> None:
    write_table(tmp_path / "table.json")
    path = camera_config(tmp_path, 'source = "clips/round.mp4", table = "table.json"')
    code, output = check(path)
    assert code == 2, output
    assert output.splitlines() == [
        f"{path}: tables[0].devices[0].options.source: no such file, folder or device: "
        f"{tmp_path / 'clips/round.mp4'} (a relative path is from the config file's folder)"
    ]
    for source in ("0", "rtsp://10.20.0.31/stream1", "virtual:hard"):
        code, output = check(camera_config(tmp_path, f'source = "{source}", table = "table.json"'))
        assert code == 0, (source, output)


def test_a_virtual_camera_on_a_cross_checked_table_is_warned_of(tmp_path: Path) -> None:
    # QA ran a `virtual` camera beside hwsim: no shoe deals to its layout, so every card
    # the shoe dealt was a misscan, and nothing had said so.
    write_table(tmp_path / "table.json")
    path = camera_config(tmp_path, 'source = "virtual:hard", table = "table.json"')
    code, output = check(path)
    assert code == 0, output
    assert output.splitlines()[0] == (
        "warning: tables[0].devices[0].options.source: 'virtual:hard' is a simulated camera "
        "that no shoe deals to: every card dealt at table bj-1 would be a misscan; for a "
        "simulated table use `hwsim run --camera` (its --config-out writes the camera)"
    )
    single = tmp_path / "single.toml"
    single.write_text(
        path.read_text().replace('id = "bj-1"\n', 'id = "bj-1"\nsingle_source = true\n')
    )
    code, output = check(single)
    assert code == 0 and "simulated camera" not in output, output


def test_camera_files_that_are_there_pass(tmp_path: Path) -> None:
    (tmp_path / "deck.json").write_text(json.dumps(DECK_HEADER))
    (tmp_path / "frames").mkdir()
    write_table(tmp_path / "table.json")
    path = camera_config(tmp_path, 'source = "frames", deck = "deck.json", table = "table.json"')
    code, output = check(path)
    assert code == 0, output
    assert "OK" in output


# -- 3b. no tables -------------------------------------------------------------------------


def test_a_config_without_tables_is_warned_of(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(BROKER)
    code, output = check(path)
    assert code == 0, output
    assert (
        "warning: no tables ([[tables]] in the file, or STUDIO_TABLES): "
        "studio controller run refuses to start without one"
    ) in output
    assert "0 table(s)" in output
    path.write_text(BROKER + TABLE)
    code, output = check(path)
    assert code == 0 and "no tables" not in output, output


def test_tables_from_the_environment_count(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(BROKER)
    code, output = check(path, env={"STUDIO_TABLES": '[{"id": "bj-1"}]'})
    assert code == 0 and "no tables" not in output and "1 table(s)" in output, output


# -- 5. studio rtp --table without a config ------------------------------------------------


def test_rtp_table_without_a_config_says_how_to_give_one() -> None:
    result = CliRunner().invoke(app, ["rtp", "--table", "bj-1"], env={"STUDIO_CONFIG": ""})
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        "error: --table reads the studio configuration, and none was given: "
        "name it with --config FILE or the STUDIO_CONFIG variable"
    )


def test_rtp_table_reads_the_config_studio_config_names(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(TABLE)
    result = CliRunner().invoke(
        app, ["rtp", "--table", "bj-2", "--side-bets"], env={"STUDIO_CONFIG": str(path)}
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: no table 'bj-2' in {path}; tables: bj-1"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("layout", None, "invalid layout: a layout is a JSON object with size and zones"),
        ("homography_image_to_layout", [[0, 0, 0]] * 3, "the homography is singular"),
    ],
)
def test_a_table_calibration_camera_run_would_refuse_is_a_mistake(
    tmp_path: Path, key: str, value: object, said: str
) -> None:
    # Both passed the check and ended `studio camera run` in a traceback: the check now
    # reads the table calibration as camera run does.
    table = tmp_path / "table.json"
    write_table(table)
    data = json.loads(table.read_text())
    data[key] = value
    table.write_text(json.dumps(data))
    path = camera_config(tmp_path, 'source = "0", table = "table.json"')
    code, output = check(path)
    assert code == 2, output
    [line] = output.splitlines()
    assert line.startswith(f"{path}: tables[0].devices[0].options.table: {table}: "), line
    assert said in line
