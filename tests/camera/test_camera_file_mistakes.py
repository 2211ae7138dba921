"""A camera file mistake is worded alike by ``studio config check`` and ``studio camera run``.

Before, the check said ``tables[0].devices[1].options.deck: no such file: PATH`` and the
camera run ``tables[bj-1].devices[cam-1]: deck profile PATH not found`` for the same
missing file, and a table calibration that is not JSON passed the check (only its
presence was looked at) while the camera run refused it in JSON's own words. Now both
name the config key (by position, as the check always did) and the resolved path in the
same line, from the same function (``studio.config.camera_files``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile
from hwsim.camera.virtual import VirtualCamera
from studio.cli import app

runner = CliRunner()
KEY = "tables[1].devices[1].options"  # the second table's second device
RELATIVE = "(a relative path is from the config file's folder)"


def _config(tmp_path: Path, options: str) -> Path:
    # A shoe before the camera and a table before its table: a key by id or by a count of
    # cameras would not be this one.
    device = '[[tables.devices]]\nid = "{id}"\nkind = "{kind}"\n'
    shoe = device.format(id="shoe-1", kind="shoe") + 'port = "socket://127.0.0.1:{port}"\n'
    path = tmp_path / "studio.toml"
    path.write_text(
        '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'
        '[[tables]]\nid = "bj-1"\n' + shoe.format(port=9)
        + '[[tables]]\nid = "bj-2"\n' + shoe.format(port=10)
        + device.format(id="cam-1", kind="camera") + f"options = {{ {options} }}\n"
    )  # fmt: skip
    return path


def _both(path: Path) -> tuple[str, str]:
    """The mistake ``config check`` prints after ``FILE: `` and the one ``camera run``
    prints after ``error: ``; each exits 2 with that one line."""
    check = runner.invoke(app, ["config", "check", str(path)])
    run = runner.invoke(
        app, ["camera", "run", "--config", str(path), "--state-dir", str(path.parent / "state")]
    )
    assert check.exit_code == 2, check.output
    assert run.exit_code == 2, run.output
    checked = check.stderr.strip().splitlines()
    assert len(checked) == 1 and checked[0].startswith(f"{path}: "), check.stderr
    refused = run.stderr.strip().splitlines()
    assert len(refused) == 1 and refused[0].startswith("error: "), run.stderr
    return checked[0].removeprefix(f"{path}: "), refused[0].removeprefix("error: ")


@pytest.fixture
def files(tmp_path: Path, deck_profile: DeckProfile) -> Path:
    """A valid deck profile and table calibration in ``tmp_path``."""
    VirtualCamera(level="easy", seed=15).calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    return tmp_path


def test_a_missing_deck_profile(files: Path) -> None:
    path = _config(files, 'source = "0", deck = "nodeck.json", table = "table.json"')
    checked, refused = _both(path)
    assert checked == refused == f"{KEY}.deck: no such file: {files / 'nodeck.json'} {RELATIVE}"


def test_a_table_calibration_that_is_not_json(files: Path) -> None:
    (files / "table.json").write_text("zones: [seat-1]\n")
    path = _config(files, 'source = "0", deck = "deck.json", table = "table.json"')
    checked, refused = _both(path)
    assert (
        checked
        == refused
        == (
            f"{KEY}.table: {files / 'table.json'} is not valid JSON "
            "(Expecting value at line 1, column 1)"
        )
    )


def test_a_table_calibration_that_is_not_a_json_object(files: Path) -> None:
    (files / "table.json").write_text("[1, 2]\n")
    path = _config(files, f'source = "0", deck = "deck.json", table = "{files / "table.json"}"')
    checked, refused = _both(path)
    assert checked == refused == f"{KEY}.table: {files / 'table.json'} is not a JSON object"


def test_a_folder_given_as_the_deck_profile(files: Path) -> None:
    (files / "decks").mkdir()
    path = _config(files, 'source = "0", deck = "decks", table = "table.json"')
    checked, refused = _both(path)
    assert checked == refused == f"{KEY}.deck: {files / 'decks'} is a folder, not a file"


def test_a_missing_source_file(files: Path) -> None:
    path = _config(files, 'source = "clips/round.mp4", deck = "deck.json", table = "table.json"')
    checked, refused = _both(path)
    assert (
        checked
        == refused
        == (f"{KEY}.source: no such file, folder or device: {files / 'clips/round.mp4'} {RELATIVE}")
    )


def test_a_table_calibration_given_as_the_deck_profile(files: Path) -> None:
    """The check let it through (it read only "a JSON object" for the deck, though it
    refused the reverse mix-up), then the camera refused to start, advising `--table`, an
    option of `studio recognise` (`camera run --table` picks tables)."""
    path = _config(files, 'source = "0", deck = "table.json", table = "table.json"')
    checked, refused = _both(path)
    assert (
        checked
        == refused
        == (
            f"{KEY}.deck: {files / 'table.json'}: a table calibration, not a deck profile: "
            "give it as options.table"
        )
    )


def test_a_deck_profile_of_another_version(files: Path) -> None:
    profile = json.loads((files / "deck.json").read_text())
    (files / "deck.json").write_text(json.dumps({**profile, "version": 0}))
    path = _config(files, 'source = "0", deck = "deck.json", table = "table.json"')
    checked, refused = _both(path)
    assert (
        checked
        == refused
        == (
            f"{KEY}.deck: {files / 'deck.json'}: written as version 0, this studio reads "
            "version 1: learn the deck again (studio calibrate deck)"
        )
    )
