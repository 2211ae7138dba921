"""Replay documents: bad input is reported with a message naming the problem; the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.rules.errors import ReplayInputError
from studio.rules.replay import replay_round


def doc(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "ruleset": "clubhouse",
        "boxes": [{"seat": 1, "wagers": [{"player": "p1", "stake": "10.00"}]}],
        "cards": ["TS", "9D", "7C", "8H"],
        "decisions": {"1": ["stand"]},
    }
    base.update(overrides)
    return base


def test_a_plain_round() -> None:
    out = replay_round(doc())
    assert out["boxes"][0]["hands"][0]["outcome"] == "push"  # 17 against 17
    assert out["dealer"]["total"] == 17
    assert out["boxes"][0]["wagers"][0]["payout"] == "10.00"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cards": ["TS", "ZZ"]}, "unknown card 'ZZ' at position 2"),
        ({"cards": ["TS", "9D", "7C"]}, "too few cards: the next card is due to dealer_hole"),
        ({"decisions": {"1": ["split"]}}, "illegal decision 'split' for seat 1 hand 1"),
        ({"cards": ["TS", "9D", "7C", "8H", "2C"]}, "card 2C at position 5 is not due"),
        ({"decisions": {"1": ["stand", "hit"]}}, "unused decisions"),
        ({"ruleset": "vegas"}, "unknown preset 'vegas'"),
        ({"ruleset": {"preset": "clubhouse", "dealer": {"hole_card": "eu"}}}, "peek"),
        ({"boxes": [{"seat": 9, "wagers": [{"player": "p", "stake": "10"}]}]}, "no seat 9"),
        ({"cards": "TS 9D"}, "cards"),
        ({"colour": "red"}, "unknown field"),
        ({"logic": 0}, "unknown engine logic 0"),
        ({"decisions": {"one": ["stand"]}}, "not a seat number"),
        ({"decisions": {"2": ["stand"]}}, "seat 2, which has no main bet"),
        ({"votes": {"1": [{"p1": "stand"}]}}, "not a Majority Rules seat"),
        (
            {
                "ruleset": "majority_speed",
                "decisions": {"1": ["hit"]},
            },
            "Best Strategy mode",
        ),
    ],
)
def test_bad_input_names_the_problem(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ReplayInputError, match=message):
        replay_round(doc(**changes))


def test_wagers_numbered_as_the_round_took_them() -> None:
    """A review: carol bet on seat 3 before alice on seat 1, so the round numbered carol 0
    and alice 1; the replay placed them in the document's box order and numbered them the
    other way, where the docs promise the settlement "field for field"."""
    boxes = [
        {"seat": 1, "wagers": [{"wager": 1, "player": "alice", "stake": "10.00"}]},
        {"seat": 3, "wagers": [{"wager": 0, "player": "carol", "stake": "5.00"}]},
    ]
    cards = ["TS", "9C", "9D", "7C", "8C", "8H"]  # seat 1, seat 3, dealer up, 1, 3, hole
    out = replay_round(doc(boxes=boxes, cards=cards, decisions={"1": ["stand"], "3": ["stand"]}))
    numbered = {w["player"]: w["wager"] for box in out["boxes"] for w in box["wagers"]}
    assert numbered == {"carol": 0, "alice": 1}
    for wager in boxes[0]["wagers"] + boxes[1]["wagers"]:
        del wager["wager"]  # without numbers: the document's order, as before
    out = replay_round(doc(boxes=boxes, cards=cards, decisions={"1": ["stand"], "3": ["stand"]}))
    numbered = {w["player"]: w["wager"] for box in out["boxes"] for w in box["wagers"]}
    assert numbered == {"alice": 0, "carol": 1}


@pytest.mark.parametrize("numbers", [(7, 5), (0, None), (1, 1), (0, 2)])
def test_wager_numbers_must_number_every_wager_from_0(numbers: tuple[Any, Any]) -> None:
    boxes = [
        {"seat": seat, "wagers": [{"player": f"p{seat}", "stake": "10.00"}]} for seat in (1, 2)
    ]
    for box, number in zip(boxes, numbers, strict=True):
        if number is not None:
            box["wagers"][0]["wager"] = number  # type: ignore[index]
    with pytest.raises(ReplayInputError, match="'wager' numbers must be 0 to 1, one per wager"):
        replay_round(doc(boxes=boxes))


def test_votes_after_a_decided_action_round_are_an_impossible_sequence() -> None:
    data = {
        "ruleset": "majority_speed",
        "boxes": [
            {
                "seat": 1,
                "wagers": [
                    {"player": "a", "stake": "10"},
                    {"player": "b", "stake": "10"},
                    {"player": "c", "stake": "10"},
                ],
            }
        ],
        "cards": ["TS", "9D", "8C", "8H"],
        "votes": {"1": [{"a": "stand", "b": "stand", "c": "hit"}]},
    }
    with pytest.raises(ReplayInputError, match="after the action round was already decided"):
        replay_round(data)
    data["decisions"] = {"1": ["stand"]}
    data["votes"] = {}
    with pytest.raises(ReplayInputError, match="give its choices as votes"):
        replay_round(data)


def test_a_document_names_the_engine_logic_its_round_ran() -> None:
    """Eight players, 11 v 6: hit 3, stand 2, double 2, then stand. Logic 2 takes hit
    after the seventh vote (the eighth cannot surpass it); logic 1 waited, tied 3-3 and
    doubled by best strategy."""
    players = [f"p{n}" for n in range(1, 9)]
    ballot = dict(zip(players, ["hit"] * 3 + ["stand"] * 2 + ["double"] * 2, strict=False))
    data: dict[str, Any] = {
        "ruleset": "majority_speed",
        "boxes": [
            {
                "seat": 1,
                "wagers": [{"player": p, "stake": "10", "auto_consent": True} for p in players],
            }
        ],
        "cards": ["5H", "6C", "6D", "7S", "9C", "TD"],  # 20 either way; dealer 13 + T busts
        "votes": {"1": [ballot, {}]},
    }
    out = replay_round(data)  # the latest logic; the hand then stands on 20 by timeout
    assert out["boxes"][0]["hands"][0]["actions"][0] == "hit (majority vote)"
    assert (out["totals"]["stakes"], out["totals"]["payouts"]) == ("80.00", "160.00")
    old = {**data, "logic": 1, "votes": {"1": [{**ballot, "p8": "stand"}]}}
    out = replay_round(old)
    assert out["boxes"][0]["hands"][0]["actions"] == ["double (tied vote, best strategy)"]
    assert (out["totals"]["stakes"], out["totals"]["payouts"]) == ("160.00", "320.00")


def test_cli_prints_json_and_fails_cleanly(tmp_path: Path) -> None:
    runner = CliRunner()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc()))
    ok = runner.invoke(app, ["replay", str(good)])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["dealer"]["total"] == 17
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc(cards=["TS", "XX"])))
    res = runner.invoke(app, ["replay", str(bad)])
    assert res.exit_code == 1
    assert "unknown card 'XX'" in res.output and "Traceback" not in res.output
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    assert runner.invoke(app, ["replay", str(broken)]).exit_code == 2
    assert runner.invoke(app, ["replay", str(tmp_path / "missing.json")]).exit_code == 2


def test_worked_examples_in_the_docs_are_the_real_output() -> None:
    doc_path = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
    text = doc_path.read_text()
    pairs = re.findall(
        r"the `round` object\):\n\n```json\n(.*?)\n```\n\nOutput:\n\n```json\n(.*?)\n```",
        text,
        re.S,
    )
    assert len(pairs) == 3  # one per seed
    for given, printed in pairs:
        assert replay_round(json.loads(given)) == json.loads(printed)


def test_a_scenario_file_replays_its_round_and_checks_what_it_expects(tmp_path: Path) -> None:
    # docs/replay.md's worked examples are scenario files: `studio replay` on one said
    # "unknown field(s) ['expect', 'round', 'seed', 'text']" (an auditor's first try).
    runner = CliRunner()
    scenarios = Path(__file__).parent / "scenarios"
    ok = runner.invoke(app, ["replay", str(scenarios / "clubhouse_split_aces.json")])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["boxes"][0]["hands"][0]["outcome"] == "win"
    assert "scenario: 13 of 13 expectations hold" in ok.stderr
    scenario = json.loads((scenarios / "clubhouse_split_aces.json").read_text())
    scenario["expect"]["dealer.total"] = 18
    scenario["expect"]["boxes.0.hands.7.total"] = 21
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(scenario))
    res = runner.invoke(app, ["replay", str(wrong)])
    assert res.exit_code == 1
    assert "expectation not met: dealer.total: expected 18, got 17" in res.stderr
    assert "boxes.0.hands.7.total: expected 21, the result has no such field" in res.stderr
    assert "scenario: 12 of 14 expectations hold" in res.stderr
    # A round document with a "round" field among others is still a round (and refused).
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({**doc(), "round": scenario["round"]}))
    res = runner.invoke(app, ["replay", str(mixed)])
    assert res.exit_code == 1 and "unknown field(s) ['round']" in res.output
