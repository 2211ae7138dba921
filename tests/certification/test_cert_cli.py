"""``studio rtp`` / ``studio shoe-stats`` on the command line, and the engine simulation."""

from __future__ import annotations

import json
import random
from pathlib import Path

from typer.testing import CliRunner

from studio.cards import full_deck
from studio.certification.main_game import analyse
from studio.certification.rulesets import engine_policy, game_rules
from studio.certification.simulate import run_simulation
from studio.cli import app
from studio.rules.ruleset import preset

runner = CliRunner()


def test_rtp_side_bets_json() -> None:
    result = runner.invoke(app, ["rtp", "--ruleset", "majority_speed", "--side-bets", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rtps = {b["key"]: round(b["rtp"] * 100, 4) for b in data["side_bets"]}
    assert rtps["21+3"] == 96.2961
    assert rtps["lucky_lucky"] == 96.0919
    assert "main_game" not in data
    pairs = next(b for b in data["side_bets"] if b["key"] == "players_pair")
    assert [ln["combinations"] for ln in pairs["lines"]] == [1456, 1664, 3328, 79872]


def test_rtp_text_prints_every_paytable_line() -> None:
    result = runner.invoke(app, ["rtp", "-r", "clubhouse", "--side-bets"])
    assert result.exit_code == 0, result.output
    for text in ("Perfect pair", "Straight flush", "RTP 95.9036%", "RTP 96.2961%", "25:1"):
        assert text in result.output


def test_rtp_with_a_rule_set_file_and_other_decks(tmp_path: Path) -> None:
    spec = {
        "preset": "clubhouse",
        "side_bets": {"perfect_pairs": {"paytable": {"kind": "pairs", "perfect": "30"}}},
    }
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(spec))
    result = runner.invoke(app, ["rtp", "-r", str(path), "--decks", "6", "--side-bets", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["decks"] == 6
    pp = next(b for b in data["side_bets"] if b["key"] == "perfect_pairs")
    assert pp["lines"][0]["pays"] == "30"


def test_rtp_main_game_classic6() -> None:
    result = runner.invoke(app, ["rtp", "-r", "classic6", "--main", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    by_strategy = {m["strategy"]: m["house_edge"] * 100 for m in data["main_game"]}
    assert abs(by_strategy["optimal composition-dependent"] - 0.7932) < 0.002
    assert by_strategy["engine basic strategy (total-dependent)"] > 0.7932


def test_rtp_bad_input_is_one_clear_line() -> None:
    result = runner.invoke(app, ["rtp", "-r", "nonsense"])
    assert result.exit_code == 2
    assert "unknown preset 'nonsense'" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["rtp", "-r", "/nonexistent/rules.json"])
    assert result.exit_code == 2
    assert "cannot read rule set file" in result.output


def _write_shoes(path: Path, shoes: dict[str, list[str]]) -> None:
    lines = []
    for shoe, codes in shoes.items():
        for seq, code in enumerate(codes):
            lines.append(
                json.dumps({"device": "shoe-1", "seq": seq, "ts": "", "card": code, "shoe": shoe})
            )
    path.write_text("\n".join(lines) + "\n")


def test_shoe_stats_command(tmp_path: Path) -> None:
    # A fair shoe is flagged with probability <= alpha (calibration: test_cert_shoe_stats);
    # this seed gives five fair shoes that pass, to test the exit codes.
    rng = random.Random(2)
    deck = [c.code for c in full_deck()] * 8
    shoes = {}
    for i in range(5):
        rng.shuffle(deck)
        shoes[f"fair-{i}"] = deck[:208]
    path = tmp_path / "fair.jsonl"
    _write_shoes(path, shoes)
    result = runner.invoke(app, ["shoe-stats", str(path), "--alpha", "0.01"])
    assert result.exit_code == 0, result.output
    assert "flagged shoes: 0 of 5" in result.output
    shoes["sorted"] = sorted(deck)[:208]
    _write_shoes(path, shoes)
    result = runner.invoke(app, ["shoe-stats", str(path), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert [s["shoe"] for s in data["shoes"] if s["flagged"]] == ["sorted"]
    result = runner.invoke(app, ["shoe-stats", str(path), "--alpha", "2"])
    assert result.exit_code == 2
    assert "--alpha" in result.output


def test_simulation_through_the_engine_agrees_with_the_exact_figure() -> None:
    rules = preset("majority_speed")
    exact = analyse(game_rules(rules), engine_policy(rules)).rtp
    sim = run_simulation(rules, 6_000, workers=2, seed=42, progress=False, chunk=1_000)
    assert sim.rounds == 6_000
    assert sim.agrees_with(exact), (sim.interval, exact)
    assert 0.005 < sim.std_error < 0.03
    assert sim.rounds_per_second_per_core > 0


def test_shoe_stats_of_a_file_without_cards_is_an_error(tmp_path: Path) -> None:
    """An empty export must not pass as "0 of 0 shoes flagged" (exit 0)."""
    for name, text in (("empty.jsonl", ""), ("blank.jsonl", "\n  \n")):
        path = tmp_path / name
        path.write_text(text)
        result = runner.invoke(app, ["shoe-stats", str(path)])
        assert result.exit_code == 2, result.output
        assert "no shoe-card events" in result.output


def test_shoe_stats_names_a_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "shoe.bin"
    path.write_bytes(b"\xff\xfe{}\n")
    result = runner.invoke(app, ["shoe-stats", str(path)])
    assert result.exit_code == 2
    assert f"{path} is not UTF-8 text" in " ".join(result.output.split())


def test_rtp_main_game_without_consent_for_majority_rules() -> None:
    """Seed 004's default wager (no consent to automatic split/double) has its own figure."""
    result = runner.invoke(app, ["rtp", "-r", "majority_speed", "--main", "--json"])
    assert result.exit_code == 0, result.output
    edges = {m["strategy"]: m["house_edge"] * 100 for m in json.loads(result.output)["main_game"]}
    without = edges["engine basic strategy, without consent"]
    assert round(without, 4) == 2.2912
    assert without > edges["engine basic strategy (total-dependent)"] + 1.5
    classic = json.loads(runner.invoke(app, ["rtp", "-r", "classic6", "--main", "--json"]).output)
    assert len(classic["main_game"]) == 2  # players decide their own boxes there
