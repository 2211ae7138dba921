"""``round/state`` says what the players are asked and until when (``pending``,
``deadline``): a platform showed its players a timer from the rule set's seconds alone,
which a pause stops."""

from __future__ import annotations

from datetime import timedelta

from test_controller_table import Driver


def test_the_state_carries_the_players_timer() -> None:
    d = Driver("clubhouse", single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    state = d.table.at(d.now).state()
    assert state.phase == "betting" and state.pending is None
    assert state.deadline == d.table.betting_deadline is not None
    d.tick(31)
    for code in ["5S", "TD", "6C", "6D"]:
        d.card(code)
    state = d.table.at(d.now).state()
    assert state.pending is not None and state.pending["kind"] == "action"
    assert state.deadline == d.now + timedelta(seconds=15)
    d.feed("manager.action", {"verb": "pause", "user": "boss", "reason": "a look"})
    state = d.table.at(d.now).state()
    assert state.paused and state.deadline is None


def test_a_round_names_the_logic_it_is_decided_by() -> None:
    d = Driver("clubhouse", single_source=True)
    d.table.logic = 17
    d.shuffle()
    d.load()
    d.tick(0.1)
    opened = next(e for e in d.events if e["type"] == "round_opened")
    assert opened["data"]["logic"] == {"table": 17, "engine": 5}


def test_a_round_names_its_currency_when_the_table_has_one() -> None:
    for currency in ["EUR", None]:
        d = Driver("clubhouse", single_source=True, currency=currency)
        d.shuffle()
        d.load()
        d.tick(0.1)
        opened = next(e for e in d.events if e["type"] == "round_opened")
        assert opened["data"]["currency"] == currency
