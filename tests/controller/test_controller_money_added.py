"""Every decision, vote, insurance answer and timeout says what it did and what money it
added (from table logic 18, engine logic 6): a platform debits a double, a split or an
insurance when it is made. Before, a decision's ``command_accepted`` said nothing of the
money, and a timeout or a vote that doubled or split (consenting stakes) was known only from
the settlement (a review: a Majority Rules split took a player from 1.00 to 2.00 unsaid)."""

from __future__ import annotations

from typing import Any

from test_controller_table import Driver

from studio.controller.table import LOGIC


def _accepted(d: Driver, cid: str) -> dict[str, Any]:
    return next(
        e["data"] for e in d.events if e["type"] == "command_accepted" and e["data"]["id"] == cid
    )


def _betting(ruleset: str, logic: int = LOGIC, **table: Any) -> Driver:
    """A table of ``ruleset`` with its first round open for bets."""
    d = Driver(ruleset, **{"single_source": True, **table})
    d.table.logic = logic
    d.shuffle(decks=6 if ruleset == "classic6" else 8)
    d.load()
    d.tick(0.1)
    return d


def _dealt(ruleset: str, cards: list[str], logic: int = LOGIC, **bet: Any) -> Driver:
    d = _betting(ruleset, logic)
    d.bet(1, "p1", **bet)
    d.tick(31)
    for code in cards:
        d.card(code)
    return d


def test_a_double_says_what_it_added() -> None:
    d = _dealt("clubhouse", ["5S", "TD", "6C", "6D"])  # 11 against a T
    d.feed("game.command", {"id": "dd", "type": "decision", "seat": 1, "player": "p1",
                            "action": "double"})  # fmt: skip
    answer = _accepted(d, "dd")
    assert answer["actions"] == [{"seat": 1, "hand": 0, "action": "double"}]
    assert answer["added"] == [
        {"wager": 0, "seat": 1, "player": "p1", "behind": False, "amount": "10.00",
         "extra": "10.00"}
    ]  # fmt: skip


def test_a_stand_adds_nothing_and_says_so() -> None:
    d = _dealt("clubhouse", ["5S", "TD", "6C", "6D"])
    d.feed("game.command", {"id": "st", "type": "decision", "seat": 1, "player": "p1",
                            "action": "stand"})  # fmt: skip
    answer = _accepted(d, "st")
    assert answer["actions"] == [{"seat": 1, "hand": 0, "action": "stand"}]
    assert answer["added"] == []


def test_insurance_says_what_it_cost() -> None:
    d = _dealt("clubhouse", ["5S", "AD", "6C", "9D"])  # the dealer's ace up: insurance
    d.feed("game.command", {"id": "ins", "type": "insurance", "seat": 1, "player": "p1",
                            "take": True})  # fmt: skip
    answer = _accepted(d, "ins")
    assert [(a["player"], a["amount"]) for a in answer["added"]] == [("p1", "5.00")]


def test_a_timeout_says_what_it_did_and_added() -> None:
    d = _dealt("classic6", ["5S", "TD", "6C", "6D"], consent_auto=True)  # 11 against a 6
    d.tick(16)
    applied = next(e["data"]["applied"] for e in d.events if e["type"] == "timeout_default")
    assert applied["actions"] == [
        {"seat": 1, "hand": 0, "action": "double (timeout, best strategy)"}
    ]
    assert [(a["player"], a["amount"], a["extra"]) for a in applied["added"]] == [
        ("p1", "10.00", "10.00")
    ]


def test_a_round_of_logic_17_answers_as_it_did() -> None:
    d = _dealt("clubhouse", ["5S", "TD", "6C", "6D"], logic=17)
    d.feed("game.command", {"id": "dd", "type": "decision", "seat": 1, "player": "p1",
                            "action": "double"})  # fmt: skip
    assert "added" not in _accepted(d, "dd")


def test_one_insurance_answer_covers_every_seat_of_the_player() -> None:
    """Seed 004: "If you are seated on both seats, insurance is applied on both
    positions". A seat was required, so the other seat's question timed out to none."""
    d = _betting("clubhouse")
    d.bet(1, "p1")
    d.bet(2, "p1")
    d.tick(31)
    for code in ["5S", "6S", "AD", "6C", "7C", "9D"]:  # seats 1, 2, the dealer's ace up
        d.card(code)
    d.feed("game.command", {"id": "ins", "type": "insurance", "player": "p1", "take": True})
    answer = _accepted(d, "ins")
    assert [(a["seat"], a["amount"]) for a in answer["added"]] == [(1, "5.00"), (2, "5.00")]


def test_a_best_strategy_box_says_what_it_played_as_the_card_lands() -> None:
    """A Majority Rules seat with one player plays Best Strategy as its cards land: the
    consenting wager's double (11 against 6) was in no event until the settlement (a review
    of the first `added`)."""
    d = _betting("majority_speed")
    d.bet(1, "p1", consent_auto=True)
    d.tick(31)
    for code in ["5S", "6D", "6C", "9D"]:  # seat 1, up card, seat 1, hole: 11 against 6
        d.card(code)
    played = [e["data"] for e in d.events if e["type"] == "auto_played"]
    assert played == [
        {
            "actions": [{"seat": 1, "hand": 0, "action": "double (best strategy)"}],
            "added": [
                {"wager": 0, "seat": 1, "player": "p1", "behind": False, "amount": "10.00",
                 "extra": "10.00"}
            ],
        }
    ]  # fmt: skip
    dealt = [e for e in d.events if e["type"] in ("card_dealt", "auto_played")]
    assert [e["type"] for e in dealt][-2:] == ["card_dealt", "auto_played"]


def test_a_correction_that_changes_an_automatic_double_says_so() -> None:
    """The shoe read 6C (11 against 6: Best Strategy doubled), the camera saw 7C; corrected
    to 7C (12 against 6: stand), the double is taken back: `wagers_changed` gives the
    10.00 back, where nothing said it and the platform kept it debited."""
    d = _betting("majority_speed", single_source=False)
    d.bet(1, "p1", consent_auto=True)
    d.tick(31)
    for code, seen, zone in [("5S", "5S", "seat:1"), ("6D", "6D", "dealer"),
                             ("6C", "7C", "seat:1"), ("9D", None, "")]:  # fmt: skip
        d.card(code)
        if seen is not None:  # the hole card lies face down
            d.camera(seen, zone)
    assert d.table.engine is not None
    assert d.table.engine.round.boxes[1].wagers[0].hand_stakes[0].total == 20
    d.tick(3.5)  # the camera window ends: a mismatch
    mismatch = next(a for a in d.table.alerts.open_alerts() if a.code.value == "card_mismatch")
    d.manager(verb="resolve", alert_id=mismatch.alert_id, resolution="correct", card="7C",
              reason="the camera is right")  # fmt: skip
    assert d.table.engine.round.boxes[1].wagers[0].hand_stakes[0].total == 10
    changed = [e["data"] for e in d.events if e["type"] == "wagers_changed"]
    assert changed == [
        {
            "added": [
                {"wager": 0, "seat": 1, "player": "p1", "behind": False, "amount": "-10.00",
                 "extra": "0.00"}
            ]
        }
    ]  # fmt: skip


def test_an_insurance_answer_without_a_seat_leaves_the_players_bets_behind_alone() -> None:
    """A review: p1 seated on seat 1 and betting behind seat 2 answered once; both were
    insured (5.00 each). The answer covers the seats the player sits on; a bet behind
    answers for itself."""
    d = _betting("clubhouse")
    d.bet(1, "p1")
    d.bet(2, "p2")
    d.bet(2, "p1", cid="behind", behind=True)
    d.tick(31)
    for code in ["5S", "6S", "AD", "6C", "7C", "9D"]:
        d.card(code)
    d.feed("game.command", {"id": "ins", "type": "insurance", "player": "p1", "take": True})
    answer = _accepted(d, "ins")
    assert [(a["seat"], a["behind"], a["amount"]) for a in answer["added"]] == [(1, False, "5.00")]
