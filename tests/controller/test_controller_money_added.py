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


def _dealt(ruleset: str, cards: list[str], logic: int = LOGIC, **bet: Any) -> Driver:
    d = Driver(ruleset, single_source=True)
    d.table.logic = logic
    d.shuffle(decks=6 if ruleset == "classic6" else 8)
    d.load()
    d.tick(0.1)
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
    d = Driver("clubhouse", single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.bet(2, "p1")
    d.tick(31)
    for code in ["5S", "6S", "AD", "6C", "7C", "9D"]:  # seats 1, 2, the dealer's ace up
        d.card(code)
    d.feed("game.command", {"id": "ins", "type": "insurance", "player": "p1", "take": True})
    answer = _accepted(d, "ins")
    assert [(a["seat"], a["amount"]) for a in answer["added"]] == [(1, "5.00"), (2, "5.00")]
