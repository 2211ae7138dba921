"""A shoe card names its shoe (load) id: one naming another shoe is held (table logic 10).

docs/protocol.md: a `ShoeCard`'s `shoe` is "the shoe (load) id, as in `shoe_loaded`". Up
to logic 9 the controller never read it: a card tagged with another shoe's id (a shoe
swapped without a load, a scanner that missed the load, another table's shoe) was dealt
without a word. Now it is held by an `integrity` alert, which pauses the round; a manager
accepts it (dealt as read), voids it (the dealer deals another) or cancels the round. A
card whose driver has not seen the load says so (`unknown`) and is not checked.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round

from studio.contract import UNKNOWN_SHOE


def _card_of_shoe(d: Driver, code: str, shoe: str) -> None:
    d.feed(
        "shoe.card",
        {"device": "shoe", "seq": d.device("shoe"), "ts": d.ts(), "card": code, "shoe": shoe},
    )


def _dealing() -> Driver:
    d = Driver(single_source=True)
    start_round(d, 1)
    assert d.table.phase == "dealing"
    return d


def _resolve(d: Driver, resolution: str) -> None:
    (alert,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution=resolution, reason="checked")


def test_a_card_of_another_shoe_is_held_not_dealt() -> None:
    d = _dealing()
    _card_of_shoe(d, "TH", "S0")
    assert [a["code"] for a in d.alerts] == ["integrity"]
    assert d.alerts[0]["message"] == "TH read from shoe 'S0', but shoe 'S1' is in play"
    assert d.table.paused and d.table.cards == []


def test_accepted_it_is_dealt_as_read() -> None:
    d = _dealing()
    _card_of_shoe(d, "TH", "S0")
    _resolve(d, "accept")
    assert not d.table.paused
    assert [(c.code, c.target["kind"]) for c in d.table.cards] == [("TH", "seat")]


def test_voided_the_dealer_deals_another() -> None:
    d = _dealing()
    _card_of_shoe(d, "TH", "S0")
    _resolve(d, "void")
    assert not d.table.paused and d.table.cards == []
    d.card("9C")
    assert [c.code for c in d.table.cards] == ["9C"]


def test_a_card_of_the_loaded_shoe_is_dealt() -> None:
    d = _dealing()
    _card_of_shoe(d, "TH", "S1")
    assert d.alerts == [] and [c.code for c in d.table.cards] == ["TH"]


def test_a_logic_9_run_dealt_it_as_it_was_played() -> None:
    d = _dealing()
    d.table.logic = 9  # the logic a replay runs for a run logged with it
    _card_of_shoe(d, "TH", "S0")
    assert d.alerts == [] and [c.code for c in d.table.cards] == ["TH"]


def test_a_card_whose_driver_has_not_seen_the_load_is_not_checked() -> None:
    # An ACME-STX shoe's card frames carry no shoe id: a driver started mid-shoe tags its
    # cards `unknown` until the next load (found by review: every card held, one by one).
    d = _dealing()
    _card_of_shoe(d, "TH", UNKNOWN_SHOE)
    assert d.alerts == [] and [c.code for c in d.table.cards] == ["TH"]


def _next_shoes_card_between_rounds(logic: int | None = None) -> list[str]:
    d = Driver(single_source=True)
    if logic is not None:
        d.table.logic = logic
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.manager(verb="cancel_round", reason="table closing")
    d.manager(verb="shoe_change", reason="new shoe")  # no round in progress: at once
    assert d.table.phase == "shoe_change"
    _card_of_shoe(d, "TH", "S2")  # the next shoe's, before its load: nothing is due
    return [a["code"] for a in d.alerts]


def test_between_rounds_a_card_of_the_next_shoe_is_not_taken_for_a_foreign_one() -> None:
    # Not "S1 is in play" (S1 is out of play): nothing is due, as before logic 10.
    assert _next_shoes_card_between_rounds() == _next_shoes_card_between_rounds(logic=9)
    assert len(_next_shoes_card_between_rounds()) == 1
    assert "integrity" not in _next_shoes_card_between_rounds()
