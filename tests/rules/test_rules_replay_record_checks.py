"""``studio replay`` of a round record: what it re-checks beyond the settlement's own fields.

A review of the round-record replay (2026-12-06) found: a round whose dealt card a manager
corrected replayed as different (the cards were taken from ``card_dealt`` alone); the money a
double or split added (``added``), the burn card (read from the settlement's own
``burned``) and the record's ``summary`` (total stake and payout, players) were never
compared, so tampering with them passed; a malformed record gave a traceback; a round with
nothing to re-check exited 1 as one that differs; and amounts were compared as strings
("20.0" against "20.00" differed).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.controller.table import TableController
from studio.rules.ruleset import ruleset_from_spec

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "controller"))
from test_controller_table import Driver, start_round
from test_rules_replay_record import by_votes  # split and double by votes: money added


class Reading(Driver):
    """A Driver that keeps the shoe's reads, as the controller logs its inputs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[dict[str, Any]] = []

    def card(self, code: str, serial: str | None = None) -> None:
        read = {"device": "shoe", "seq": self.seq["shoe"] + 1, "card": code, "shoe": "S1"}
        self.reads.append(read)
        super().card(code, serial)


def record_of(d: Driver, *, inputs: bool = True) -> dict[str, Any]:
    """The round's record as REST answers it: its round events (and the shoe's reads)."""
    events = d.events
    opened = next(e for e in events if e["type"] == "round_opened")
    settled = next(e for e in events if e["type"] == "round_settled")["data"]["result"]
    summary = {
        "round_id": opened["round_id"],
        "table": "bj-1",
        "status": "settled",
        "players": sorted({w["player"] for b in settled["boxes"] for w in b["wagers"]}),
        "total_stake": settled["totals"]["stakes"],
        "total_payout": settled["totals"]["payouts"],
    }
    logged = [
        {"kind": "out.round_event", "seq": e["seq"], "type": e["type"], "data": e["data"]}
        for e in events
    ]
    if inputs and isinstance(d, Reading):
        logged += [{"kind": "shoe.card", "data": read} for read in d.reads]
    return json.loads(json.dumps({"summary": summary, "events": logged}, default=str))


def replay(record: dict[str, Any], tmp_path: Path) -> Any:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    return CliRunner().invoke(app, ["replay", "--compact", str(path)])


def event(record: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(e["data"] for e in record["events"] if e.get("type") == kind)


def settlement(record: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = event(record, "round_settled")["result"]
    return result


def deal(d: Driver, *cards: tuple[str, str]) -> None:
    for code, zone in cards:
        d.card(code)
        d.camera(code, zone)


def mismatched_up_card(resolution: str, **more: Any) -> Driver:
    """The shoe reads the dealer's up card as 7D, the camera sees 7C: a manager resolves."""
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"))
    d.camera("7C", "dealer")
    d.card("7D")
    if resolution == "correct":
        deal(d, ("9D", "seat:1"))
    d.tick(3.5)
    alert = next(a for a in d.alerts if a["code"] == "card_mismatch")
    d.manager(verb="resolve", alert_id=alert["alert_id"], resolution=resolution, **more)
    if resolution == "void":
        deal(d, ("7C", "dealer"), ("9D", "seat:1"))
    deal(d, ("5S", "dealer"))
    d.decide(1, "stand", "c1")
    deal(d, ("TS", "dealer"))
    d.tick(5)
    return d


def test_a_card_a_manager_corrected_or_voided_replays_as_the_controller_settled_it(
    tmp_path: Path,
) -> None:
    d = mismatched_up_card("correct", card="8C", reason="camera right")
    record = record_of(d)
    action = event(record, "manager_action")
    assert (action["corrected"], action["to"]) == (2, "8C")
    assert settlement(record)["dealer"]["cards"][0] == "8C"
    result = replay(record, tmp_path)
    # Before: exit 1, dealer.cards.0: recorded "8C", replayed "7D".
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dealer"]["cards"] == ["8C", "5S", "TS"]
    d = mismatched_up_card("void", reason="misdealt")
    record = record_of(d)
    assert event(record, "manager_action")["voided"] == ["7D"]
    result = replay(record, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dealer"]["cards"] == ["7C", "5S", "TS"]


def test_a_card_voided_before_the_last_moves_the_later_ones_up(tmp_path: Path) -> None:
    """The dealer's first draw voided after a second: the second is the first now, and the
    card dealt next takes the second's index (the controller numbers them anew)."""
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"), ("7C", "dealer"), ("KC", "seat:1"), ("5S", "dealer"))
    d.decide(1, "stand", "s1")
    d.camera("3H", "dealer")
    d.card("3D")
    deal(d, ("4S", "dealer"))
    d.tick(3.5)
    alert = next(a for a in d.alerts if a["code"] == "card_mismatch")
    d.manager(verb="resolve", alert_id=alert["alert_id"], resolution="void", reason="misdealt")
    deal(d, ("TS", "dealer"))
    d.tick(5)
    record = record_of(d)
    assert settlement(record)["dealer"]["cards"] == ["7C", "5S", "4S", "TS"]
    dealt = [e["data"] for e in record["events"] if e.get("type") == "card_dealt"]
    assert [(c["card"], c["index"]) for c in dealt[-3:]] == [("3D", 5), ("4S", 6), ("TS", 6)]
    result = replay(record, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dealer"]["cards"] == ["7C", "5S", "4S", "TS"]


def added_entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for e in record["events"]:
        data = e.get("data") or {}
        applied = data.get("applied") if e.get("type") == "timeout_default" else data
        if isinstance(applied, dict):
            found += applied.get("added") or []
    return found


def test_the_money_a_wager_added_is_compared_with_the_replay(tmp_path: Path) -> None:
    record = record_of(by_votes())
    assert replay(record, tmp_path).exit_code == 0
    assert added_entries(record), "the round added money (a split, a double)"
    tampered = copy.deepcopy(record)
    first = added_entries(tampered)[0]
    first["amount"] = first["extra"] = "999.00"
    result = replay(tampered, tmp_path)
    # Before: exit 0, the `added` amounts were never read.
    assert result.exit_code == 1
    assert f"differs: charged.wager {first['wager']}: recorded" in result.stderr
    # A bet's `taken` too.
    tampered = copy.deepcopy(record)
    event(tampered, "command_accepted")["taken"]["stake"] = "1.00"
    result = replay(tampered, tmp_path)
    assert result.exit_code == 1 and "differs: charged.wager 0:" in result.stderr


def burning_round() -> Reading:
    """A table burning a card each round (a rule set's override): its code never shown."""
    d = Reading(single_source=True)
    rules = ruleset_from_spec({"preset": "clubhouse", "shoe": {"burn": "each_round"}})
    d.table = TableController(d.table.settings, rules, round_gap=1.0)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.card("2S")  # the burn card
    d.bet(1, "p1")
    d.tick(20)
    for code in ["TH", "7C", "9D", "5S", "TS"]:
        d.card(code)
        if code == "5S":
            d.decide(1, "stand", "c1")
    d.tick(5)
    return d


def test_the_burn_card_is_the_shoes_read_and_the_summary_is_compared(tmp_path: Path) -> None:
    record = record_of(burning_round())
    assert settlement(record)["burned"] == ["2S"]
    burn = next(e["data"] for e in record["events"] if e.get("type") == "card_dealt")
    assert burn["card"] == "??" and burn["target"]["kind"] == "burn"
    assert replay(record, tmp_path).exit_code == 0
    tampered = copy.deepcopy(record)
    settlement(tampered)["burned"] = ["AS"]
    result = replay(tampered, tmp_path)
    # Before: exit 0 (the burn card was read from the settlement's own `burned`).
    assert result.exit_code == 1
    assert 'differs: burned.0: recorded "AS", replayed "2S"' in result.stderr
    # A record without the shoe's inputs: the settlement's, and a note that it is unchecked.
    result = replay(record_of(burning_round(), inputs=False), tmp_path)
    assert result.exit_code == 0 and "not re-checked" in result.stderr
    for key, value in (
        ("total_payout", "9999.00"),
        ("total_stake", "0.00"),
        ("players", ["p1", "p9"]),
    ):
        tampered = copy.deepcopy(record)
        tampered["summary"][key] = value
        result = replay(tampered, tmp_path)
        # Before: exit 0, the summary was never compared.
        assert result.exit_code == 1, key
        assert f"differs: summary.{key}: recorded" in result.stderr


def test_amounts_are_compared_as_money_not_as_text(tmp_path: Path) -> None:
    record = record_of(burning_round())
    wager = settlement(record)["boxes"][0]["wagers"][0]
    assert wager["payout"] == "20.00"
    for same in ("20.0", "20", 20, 20.0):
        tampered = copy.deepcopy(record)
        settlement(tampered)["boxes"][0]["wagers"][0]["payout"] = same
        tampered["summary"]["total_payout"] = same
        result = replay(tampered, tmp_path)
        # Before: exit 1, boxes.0.wagers.0.payout: recorded "20.0", replayed "20.00".
        assert result.exit_code == 0, (same, result.stderr)
    tampered = copy.deepcopy(record)
    settlement(tampered)["boxes"][0]["wagers"][0]["payout"] = "20.01"
    assert replay(tampered, tmp_path).exit_code == 1


def _bet(record: dict[str, Any]) -> dict[str, Any]:
    command: dict[str, Any] = event(record, "command_accepted")["command"]
    return command


def _timeout(record: dict[str, Any]) -> None:
    bogus = {"kind": "out.round_event", "type": "timeout_default", "data": {"pending": {}}}
    bogus["data"]["pending"] = {"kind": "action"}
    record["events"].insert(3, bogus)


MALFORMED = [
    ("a bet without player", lambda r: _bet(r).pop("player"), "'command.player' must be"),
    ("a bet's seat null", lambda r: _bet(r).__setitem__("seat", None), "'command.seat' must"),
    ("a card without index", lambda r: event(r, "card_dealt").pop("index"), "'index' must"),
    ("an index no number", lambda r: event(r, "card_dealt").__setitem__("index", "x"), "'index'"),
    ("a command a list", lambda r: event(r, "command_accepted").__setitem__("command", [1]), ""),
    (
        "round_config a list",
        lambda r: event(r, "round_settled").__setitem__("round_config", [1]),
        "'round_config' must be an object",
    ),
    ("a timeout's pending without seat", _timeout, "'pending.seat' must be a whole number"),
    (
        "an added amount no amount",
        lambda r: added_entries(r)[0].__setitem__("amount", "lots"),
        "'added[].amount' must be an amount",
    ),
]


@pytest.mark.parametrize(("name", "damage", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_record_is_an_input_error_not_a_traceback(
    name: str, damage: Any, message: str, tmp_path: Path
) -> None:
    record = record_of(by_votes())
    damage(record)
    result = replay(record, tmp_path)
    # Before: a traceback (KeyError, TypeError, ValueError).
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1
    assert result.stderr.startswith("error: round bj-1-R1"), result.stderr
    assert message in result.stderr
