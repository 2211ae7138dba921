"""The report's inputs: the rules it certifies, and claims printed only beside their own game."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from studio.cli import app

runner = CliRunner()


def _side(output: str) -> dict[str, dict[str, object]]:
    return {b["key"]: b for b in json.loads(output)["side_bets"]}


def test_a_claim_is_not_set_beside_another_deck_count() -> None:
    """majority_speed's claims are for its 8-deck shoe: a 2-deck figure is not compared."""
    result = runner.invoke(app, ["rtp", "-r", "majority_speed", "--decks", "2", "--side-bets"])
    assert result.exit_code == 0, result.output
    assert "published claim 95.90%   (computed" not in result.output
    assert "published claim 95.90% not compared" in result.output
    assert "8 decks" in result.output.split("published claim 95.90% not compared", 1)[1]
    data = _side(
        runner.invoke(
            app, ["rtp", "-r", "majority_speed", "--decks", "2", "--side-bets", "--json"]
        ).output
    )
    assert data["players_pair"]["published_rtp"] == "95.90"
    assert data["players_pair"]["published_applies"] is False


def test_a_claim_is_not_set_beside_another_paytable(tmp_path: Path) -> None:
    spec = {"preset": "majority_speed", "side_bets": {"21+3": {"paytable": {"flush": "4"}}}}
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(spec))
    result = runner.invoke(app, ["rtp", "-r", str(path), "--side-bets", "--json"])
    assert result.exit_code == 0, result.output
    data = _side(result.output)
    assert data["21+3"]["published_applies"] is False
    assert data["players_pair"]["published_applies"] is True  # that bet is unchanged
    text = runner.invoke(app, ["rtp", "-r", str(path), "--side-bets"]).output
    assert "published claim 96.25% not compared" in text
    assert "published claim 95.90%   (computed 95.9036%)" in text


def test_the_main_game_claim_is_not_set_beside_other_rules() -> None:
    result = runner.invoke(app, ["rtp", "-r", "classic6", "--decks", "8", "--main", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["published_rtp"] == "99.27"
    assert data["published_applies"] is False
    text = runner.invoke(app, ["rtp", "-r", "classic6", "--decks", "8", "--main"]).output
    assert "published RTP claim 99.27% not compared" in text
    same = json.loads(runner.invoke(app, ["rtp", "-r", "classic6", "--main", "--json"]).output)
    assert same["published_applies"] is True


CONFIG = """
[[tables]]
id = "t1"
[tables.ruleset]
preset = "majority_speed"
[tables.ruleset.side_bets."21+3".paytable]
flush = 4

[[tables]]
id = "t2"
ruleset = "classic6"
"""


def test_rtp_of_a_configured_table_certifies_the_rules_it_runs(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(CONFIG)
    result = runner.invoke(
        app, ["rtp", "--config", str(path), "--table", "t1", "--side-bets", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["table"] == "t1"
    assert data["rules"]["side_bets"]["21+3"]["paytable"]["flush"] == "4"
    # 8-deck 21+3 lines (GAME-FACTS' combinations) at the table's pays, flush 4:1
    won = 2912 * 101 + 24576 * 41 + 61568 * 31 + 368640 * 11 + 700928 * 5
    assert _side(result.output)["21+3"]["rtp_exact"] == _reduced(won, 11912160)
    text = runner.invoke(app, ["rtp", "--config", str(path), "--table", "t1", "--side-bets"])
    assert f"table t1 of {path}" in text.output
    assert "rules sha256 " + data["rules_sha256"] in text.output
    plain = json.loads(
        runner.invoke(app, ["rtp", "-r", "majority_speed", "--json", "--side-bets"]).output
    )
    assert plain["rules_sha256"] != data["rules_sha256"]


def test_rtp_of_an_unknown_table_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(CONFIG)
    result = runner.invoke(app, ["rtp", "--config", str(path), "--table", "t9", "--side-bets"])
    assert result.exit_code == 2
    assert "t9" in result.output and "t1, t2" in result.output
    both = runner.invoke(app, ["rtp", "-r", "classic6", "--config", str(path), "--table", "t1"])
    assert both.exit_code == 2


def test_the_report_states_the_main_game_rules() -> None:
    text = runner.invoke(app, ["rtp", "-r", "majority_speed", "--side-bets"]).output
    head = text.splitlines()[1]
    for part in ("blackjack pays 3:2", "double after split", "split to 2 hands", "no surrender"):
        assert part in head, head
    assert "10-card Charlie" in head


def _reduced(num: int, den: int) -> str:
    from fractions import Fraction

    f = Fraction(num, den)
    return f"{f.numerator}/{f.denominator}"


def test_json_gives_each_side_bets_hit_frequency() -> None:
    """The text report prints it; the machine-readable one must carry it too (exactly)."""
    data = _side(runner.invoke(app, ["rtp", "-r", "clubhouse", "--side-bets", "--json"]).output)
    pp = data["perfect_pairs"]
    assert pp["hit_frequency_exact"] == _reduced(1456 + 1664 + 3328, 86320)
    assert abs(pp["hit_frequency"] - (1456 + 1664 + 3328) / 86320) < 1e-15
    t3 = data["21+3"]
    wins = 2912 + 24576 + 61568 + 368640 + 700928
    assert abs(t3["hit_frequency"] - wins / 11912160) < 1e-15
