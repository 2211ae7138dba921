"""The dealer is told when the round being played is the shoe's last (the prompt's notice).

A review of the dealer's prompts: the cut card's coming out was told the managers (an info
alert), and the dealer learnt of the shoe change only from "Change shoe" after the round;
seed 004's dealer announces, once the divider is dealt, that the cards are replaced after
the round.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round

from studio.contract import DealerPrompt


def cut_card(d: Driver) -> None:
    d.feed(
        "cutcard.event",
        {"device": "cut", "seq": d.device("cut"), "ts": d.ts(), "event": "cut_card_detected"},
    )


def test_the_dealer_is_told_the_cut_card_is_out_until_the_round_ends() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")
    assert d.table.prompt().notice is None
    cut_card(d)
    notice = "Cut card out: last round of this shoe"
    assert d.table.prompt().notice == notice
    for code in ["7C", "9D", "TS"]:
        d.card(code)
        assert d.table.prompt().notice == notice
    # In the payload, beside the step (a game server or the dealer's display reads it).
    assert DealerPrompt.model_validate(d.table.prompt().model_dump(mode="json")).notice == notice
    assert d.table.summary()["prompt"]["notice"] == notice
    d.decide(1, "stand", "c1")
    assert d.table.phase == "shoe_change" and d.table.prompt().notice is None
    d.shuffle()
    d.load("S2")
    d.tick(0.1)
    assert d.table.phase == "betting" and d.table.prompt().notice is None


def test_a_managers_shoe_change_is_told_as_such() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.manager(verb="shoe_change", reason="new decks")
    assert d.table.prompt().notice == "Shoe change requested: last round of this shoe"


def test_classic6_has_no_last_round_notice() -> None:
    # Every classic6 round is its shoe's last: a notice on each would be noise.
    d = Driver(ruleset="classic6", single_source=True)
    d.shuffle(6)
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting" and d.table.prompt().notice is None
