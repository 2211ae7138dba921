"""`studio rtp` / `shoe-stats` inputs: renamed rule sets, preset names against files,
progress with --json, rule sets the main-game analysis does not cover, the engine_exact
and Buster benchmark command lines, shoe ids."""

from __future__ import annotations

import importlib.util
import json
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from studio.certification import engine_exact
from studio.certification.rulesets import base_preset, claim_basis, load_ruleset
from studio.cli import app
from studio.rules.paytables import SideBetKind
from studio.rules.ruleset import ruleset_from_spec

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
EU_RESPLIT = {
    "preset": "majority_speed",
    "dealer": {"hole_card": "eu", "peek": "none"},
    "split": {"max_hands": 4},
}


def _side_bets_json(args: list[str]) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["rtp", *args, "--side-bets", "--json"])
    assert result.exit_code == 0, result.output
    items: list[dict[str, Any]] = json.loads(result.stdout)["side_bets"]
    return items


# 1. A renamed rule set inherits the preset's claims but not its game.


def test_a_renamed_preset_with_other_decks_does_not_compare_the_seeds_claims(
    tmp_path: Path,
) -> None:
    spec = {"preset": "majority_speed", "name": "table_t9", "shoe": {"decks": 2}}
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(spec))
    items = _side_bets_json(["-r", str(path)])
    pairs = next(i for i in items if i["key"] == "players_pair")
    assert pairs["published_rtp"] == "95.90"
    assert pairs["published_applies"] is False
    assert "8 decks (here 2)" in pairs["published_basis"]
    text = runner.invoke(app, ["rtp", "-r", str(path), "--side-bets"]).output
    assert "published claim 95.90%   (computed" not in text
    assert "published claim 95.90% not compared" in text
    # the main game, through the function the report uses
    rules = ruleset_from_spec(spec)
    basis = claim_basis(rules, base=base_preset(spec))
    assert basis is not None and "decks 8 (here 2)" in basis


def test_a_renamed_preset_with_the_same_rules_compares_the_claims(tmp_path: Path) -> None:
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps({"preset": "majority_speed", "name": "table_t9"}))
    items = _side_bets_json(["-r", str(path)])
    assert all(i["published_applies"] is True for i in items)


def test_a_table_renaming_its_preset_does_not_compare_the_claims(tmp_path: Path) -> None:
    config = tmp_path / "studio.toml"
    config.write_text(
        "[[tables]]\n"
        'id = "t1"\n'
        'ruleset = { preset = "majority_speed", name = "speed_room_2", shoe = { decks = 6 } }\n'
    )
    items = _side_bets_json(["--table", "t1", "--config", str(config)])
    assert all(i["published_applies"] is False for i in items), items
    assert all("8 decks (here 6)" in i["published_basis"] for i in items)


def test_the_base_preset_is_read_from_the_spec_not_the_name() -> None:
    assert base_preset("classic6") is not None
    spec = {"preset": "classic6", "name": "majority_speed"}
    base = base_preset(spec)
    assert base is not None and base.name == "classic6"
    assert base_preset({"name": "x"}) is None
    assert claim_basis(ruleset_from_spec(spec), SideBetKind.PLAYERS_PAIR, base=base) is None


# 2. Preset names win over files of the same name in the current directory.


def test_a_folder_named_like_a_preset_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "majority_speed").mkdir()
    (tmp_path / "classic6").write_text('{"preset": "clubhouse"}')
    assert load_ruleset("classic6").name == "classic6"
    result = runner.invoke(app, ["rtp", "--side-bets"])  # the default, majority_speed
    assert result.exit_code == 0, result.output
    assert "Rule set majority_speed" in result.output
    result = runner.invoke(app, ["rtp", "-r", "classic6", "--side-bets"])
    assert result.exit_code == 0, result.output
    assert "Rule set classic6" in result.output


def test_a_rule_set_file_is_a_suffix_or_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myrules").write_text('{"preset": "clubhouse", "name": "mine"}')
    assert load_ruleset("./myrules").name == "mine"
    assert load_ruleset(str(tmp_path / "myrules")).name == "mine"
    result = runner.invoke(app, ["rtp", "-r", "myrules", "--side-bets"])
    assert result.exit_code == 2
    assert "unknown preset 'myrules'" in result.output
    assert "./myrules" in result.output


# 3. --simulate shows its progress (stderr) with --json too.


def test_simulation_progress_is_shown_with_json(monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.certification import simulate

    seen: dict[str, Any] = {}
    real = simulate.run_simulation

    def spy(*args: Any, **kwargs: Any) -> simulate.SimulationResult:
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(simulate, "run_simulation", spy)
    args = ["rtp", "-r", "clubhouse", "--main", "--simulate", "200", "--workers", "1"]
    result = runner.invoke(app, [*args, "--seed", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert seen.get("progress", True) is True
    assert "simulated 200/200 rounds" in result.stderr
    assert json.loads(result.stdout)["simulation"]["rounds"] == 200


# 5. A rule set the main-game analysis does not cover still gets its side bets.


def test_an_unsupported_main_game_still_prints_the_side_bets(tmp_path: Path) -> None:
    path = tmp_path / "eu4.json"
    path.write_text(json.dumps(EU_RESPLIT))
    result = runner.invoke(app, ["rtp", "-r", str(path)])
    assert result.exit_code == 0, result.output
    assert "Buster Blackjack" in result.stdout
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("Main game not computed")]
    assert len(lines) == 1 and "EU ten-up stake return" in lines[0]
    result = runner.invoke(app, ["rtp", "-r", str(path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["main_game"] is None
    assert "resplitting" in out["main_game_error"]
    assert len(out["side_bets"]) == 5
    # asked for the main game alone, it is the error it was
    result = runner.invoke(app, ["rtp", "-r", str(path), "--main"])
    assert result.exit_code == 2
    assert "error: resplitting" in result.output


# 6. Command lines of the engine check and of the Buster benchmark.


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "nosuch"], "invalid choice: 'nosuch'"),
        (["--decks", "0"], "1..8 decks"),
        (["--decks", "9"], "1..8 decks"),
        (["--tolerance", "-1"], "0 or more"),
    ],
)
def test_engine_exact_refuses_bad_arguments_in_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        engine_exact.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def _benchmark(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = ROOT / "benchmarks" / "buster_through_engine.py"
    spec = importlib.util.spec_from_file_location("buster_through_engine", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # registered, so the process pool can pickle its functions by name
    monkeypatch.setitem(sys.modules, "buster_through_engine", module)
    spec.loader.exec_module(module)
    return module


def test_buster_benchmark_plays_every_round_and_computes_the_exact_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _benchmark(monkeypatch)
    monkeypatch.setattr(bench, "CHUNK", 40)
    bench.main(["--rounds", "100", "--workers", "1"])
    out = capsys.readouterr().out
    assert "100 rounds" in out  # not 80: the last, shorter chunk is played too
    assert f"exact {100 * float(bench.exact_rtp()):.4f}%" in out
    assert f"{100 * float(bench.exact_rtp()):.4f}" == "93.8659"
    for bad in (["--rounds", "0"], ["--rounds", "1"], ["--workers", "0"], ["--logic", "99"]):
        with pytest.raises(SystemExit) as exc:
            bench.main(bad)
        assert exc.value.code == 2


# 7. Shoe ids are non-empty strings; a shoe too short for any test has no verdict.


@pytest.mark.parametrize("shoe", [None, "", "  ", 5, ["a"]])
def test_shoe_stats_refuses_a_shoe_id_that_is_not_a_string(tmp_path: Path, shoe: object) -> None:
    path = tmp_path / "cards.jsonl"
    good = json.dumps({"shoe": "S-1", "seq": 1, "card": "QH"})
    path.write_text(good + "\n" + json.dumps({"shoe": shoe, "seq": 2, "card": "2H"}) + "\n")
    result = runner.invoke(app, ["shoe-stats", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:2: shoe must be a non-empty string" in result.output


def test_a_shoe_too_short_for_any_test_is_not_tested(tmp_path: Path) -> None:
    path = tmp_path / "cards.jsonl"
    cards = ["QH", "2S", "7D"]
    path.write_text(
        "".join(
            json.dumps({"shoe": "short", "seq": i, "card": c}) + "\n" for i, c in enumerate(cards)
        )
    )
    result = runner.invoke(app, ["shoe-stats", str(path)])
    assert result.exit_code == 0, result.output
    row = next(ln for ln in result.output.splitlines() if ln.startswith("short"))
    assert row.endswith("not tested")
    assert " ok" not in row
    assert "not tested: 1 shoe(s)" in result.output
    out = json.loads(runner.invoke(app, ["shoe-stats", str(path), "--json"]).stdout)
    assert out["shoes"][0]["verdict"] == "not tested"
    assert out["shoes"][0]["flagged"] is False
    assert out["aggregate"]["untested"] == 1


# 4. A bet behind that neither doubles along nor follows a split: the no-consent figure.

BEHIND = "behind"


def _bet_behind(rnd: Any, consent: bool = True) -> None:
    """The seated box (its player consents) and a behind bet on it: no double, first hand."""
    from studio.certification.simulate import PLAYER, SEAT, STAKE

    rnd.place_wager(SEAT, PLAYER, STAKE, {}, auto_consent=True)
    rnd.place_wager(
        SEAT, BEHIND, STAKE, {}, behind=True, behind_double=False, behind_split="first_hand"
    )
    rnd.close_betting()


def _behind_net(rnd: Any) -> float:
    from studio.certification.simulate import STAKE

    (wager,) = [w for w in rnd.settle().wagers if w.behind]
    return float(wager.payout - wager.stake) / float(STAKE)


def test_bet_behind_without_double_or_split_is_the_no_consent_game_through_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from studio.certification.main_game import analyse
    from studio.certification.rulesets import engine_policy, game_rules

    rules = ruleset_from_spec({"preset": "clubhouse"})  # early surrender too
    shoe = (3, 0, 0, 0, 0, 2, 0, 2, 0, 5)  # pairs, doubles and naturals on 14 cards
    policy = engine_policy(rules)
    exact = analyse(game_rules(rules), policy, shoe=shoe, consent=False).expected_value
    monkeypatch.setattr(engine_exact, "bet", _bet_behind)
    monkeypatch.setattr(engine_exact, "net_result", _behind_net)
    assert engine_exact.engine_value(rules, None, shoe) == pytest.approx(exact, abs=1e-9)
    assert exact < analyse(game_rules(rules), policy, shoe=shoe).expected_value


def test_rtp_prints_the_bet_behind_line_for_a_table_with_bet_behind() -> None:
    result = runner.invoke(app, ["rtp", "-r", "clubhouse", "--main", "--json"])
    assert result.exit_code == 0, result.output
    lines = {m["strategy"]: m for m in json.loads(result.stdout)["main_game"]}
    behind = lines["bet behind (no double, first split hand only)"]
    engine = lines["engine basic strategy (total-dependent)"]
    assert behind["rtp"] < engine["rtp"]
    result = runner.invoke(app, ["rtp", "-r", "majority_speed", "--main"])
    assert "bet behind" not in result.output  # no bet behind at Majority Rules tables


def test_a_yaml_ratio_is_no_base_60_number(tmp_path: Path) -> None:
    """YAML 1.1 reads ``25:1`` as 1501 (base 60): ``studio rtp`` certified a 1501:1
    paytable from a file that wrote 25:1 (a CLI review, 2026-12-07). A ratio stays text:
    the main game's pays take it (``6:5`` is 1.2), a paytable's line refuses it."""
    six_five = tmp_path / "six_five.yaml"
    six_five.write_text("preset: classic6\nblackjack_pays: 6:5\n")
    assert load_ruleset(str(six_five)).blackjack_pays == Decimal("1.2")
    pairs = tmp_path / "pairs.yaml"
    pairs.write_text(
        "preset: majority_speed\nside_bets:\n  players_pair:\n    paytable:\n"
        "      kind: pairs\n      perfect: 25:1\n      coloured: 12\n      mixed: 6\n"
    )
    result = CliRunner().invoke(app, ["rtp", "--ruleset", str(pairs), "--side-bets"])
    assert result.exit_code == 2, result.output
    assert "side_bets.players_pair.paytable.pairs.perfect: Input should be a valid decimal" in (
        result.output
    )
    assert "1501" not in result.output
