"""`studio replay FILE` on a file that is not a round document: one line, exit 2.

The round being wrong is exit 1 (tests/rules/test_rules_replay.py); the file not being
readable UTF-8 JSON is exit 2, as docs/replay.md says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.rules.errors import WagerError
from studio.rules.round import Round
from studio.rules.ruleset import ruleset_from_spec

DOC = {
    "ruleset": "clubhouse",
    "boxes": [{"seat": 1, "wagers": [{"player": "p1", "stake": "10.00"}]}],
    "cards": ["TS", "9D", "7C", "8H"],
    "decisions": {"1": ["stand"]},
}


def replay(args: list[str], stdin: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["replay", *args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_a_latin_1_file_is_named_with_the_byte_and_its_position(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_bytes(b'{"comment": "caf\xe9"}')
    code, output = replay([str(path)])
    assert code == 2, output
    assert output.strip() == (
        f"error: {path} is not UTF-8 text (byte 0xe9 at position 16, line 1); save it as UTF-8"
    )


def test_latin_1_on_stdin_is_the_same_message(tmp_path: Path) -> None:
    code, output = replay(["-"], stdin=b'{\n"comment": "\xe9"}')
    assert code == 2, output
    assert output.strip() == (
        "error: - is not UTF-8 text (byte 0xe9 at position 14, line 2); save it as UTF-8"
    )


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(DOC).encode())
    code, output = replay(["--compact", str(path)])
    assert code == 0, output
    assert json.loads(output)["dealer"]["total"] == 17
    code, output = replay(["--compact", "-"], stdin=b"\xef\xbb\xbf" + json.dumps(DOC).encode())
    assert code == 0, output


def test_invalid_json_gives_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_text('{\n  "ruleset": "majority_speed",\n  "boxes": [}\n')
    code, output = replay([str(path)])
    assert code == 2, output
    assert output.strip() == f"error: {path} is not JSON: Expecting value (line 3, column 13)"


def test_json_nested_too_deeply_is_bad_input_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_text("[" * 100_000)
    code, output = replay([str(path)])
    assert code == 2, output
    assert output.strip() == f"error: {path} is not JSON: nested too deeply"


def test_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_bytes(b"\x80\x81")
    done = subprocess.run(
        [sys.executable, "-m", "studio.cli", "replay", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"error: {path} is not UTF-8 text (byte 0x80 at position 0, line 1); save it as UTF-8\n"
    )


def _with_wager(**fields: object) -> dict[str, object]:
    wager = {"player": "p1", "stake": "10.00", **fields}
    return {**DOC, "boxes": [{"seat": 1, "wagers": [wager]}]}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        # JSON's true is a Python int: it was a stake of 1.00, or a traceback (Decimal("True")).
        (_with_wager(stake=True), "box 1: stake must be a decimal string, not true"),
        (
            _with_wager(side_bets={"perfect_pairs": True}),
            "box 1, player p1: money must be a decimal string, not True",
        ),
        # bool("false") is True: a string was taken for yes.
        (_with_wager(behind="false"), 'box 1: behind must be true or false, not "false"'),
        (_with_wager(insurance="no"), 'box 1: insurance must be true or false, not "no"'),
        ({**DOC, "new_shoe": 1}, "new_shoe must be true or false, not 1"),
        (
            {**DOC, "shoe_cards_dealt": "12"},
            'shoe_cards_dealt must be a whole number >= 0, not "12"',
        ),
        ({**DOC, "shoe_cards_dealt": -1}, "shoe_cards_dealt must be a whole number >= 0, not -1"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_not_read_as_something_else(
    tmp_path: Path, doc: dict[str, object], message: str
) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(doc))
    code, output = replay([str(path)])
    assert code == 1, output
    assert output.strip() == f"error: {message}"


def test_the_engine_refuses_a_boolean_as_money() -> None:
    rnd = Round(ruleset_from_spec("clubhouse"))
    rnd.open_betting()
    with pytest.raises(WagerError, match="not True"):
        rnd.place_wager(1, "p1", True)
    with pytest.raises(WagerError, match="not True"):
        rnd.place_wager(1, "p1", "10.00", {"perfect_pairs": True})
    assert not rnd.boxes  # (nothing placed)


@pytest.mark.parametrize("side_bets", [True, ["21+3"], "21+3"])
def test_side_bets_that_are_not_an_object_are_refused(tmp_path: Path, side_bets: object) -> None:
    # Before: an AttributeError traceback ('bool' object has no attribute 'items').
    path = tmp_path / "round.json"
    path.write_text(json.dumps(_with_wager(side_bets=side_bets)))
    code, output = replay([str(path)])
    assert code == 1, output
    assert output.strip().startswith(
        "error: box 1, player p1: side bets are an object of name: amount, not "
    ), output
