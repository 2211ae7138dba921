"""The dealer prompt says what to do, in the dealer's words (a review of the prompts).

A split hand's decision did not say which hand ("Wait for decisions (seat 1)" while hand 2
decided); the insurance offer read only "Wait for decisions"; a shoe change said "Change
shoe" until the next round opened, never its steps (collect, shuffle and count, load), and
classic6, which reshuffles every round, said nothing else after any round.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round


def test_a_split_hands_decision_names_the_hand() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["8H", "7C", "8D", "5S"]:
        d.card(code)
    assert d.table.prompt().text == "Wait for decisions (seat 1)"
    d.decide(1, "split", "s1")
    seen = []
    for step, code in enumerate(["2C", "TD"]):
        seen.append(d.table.prompt().text)
        d.card(code)
        seen.append(d.table.prompt().text)
        d.decide(1, "stand", f"x{step}")
    assert seen == [
        "Deal to seat 1, hand 1",
        "Wait for decisions (seat 1, hand 1)",
        "Deal to seat 1, hand 2",
        "Wait for decisions (seat 1, hand 2)",
    ]


def test_the_insurance_offer_says_what_the_players_decide() -> None:
    d = Driver(single_source=True)  # clubhouse: insurance and early surrender
    start_round(d, 1)
    for code in ["TH", "AC", "8D", "5S"]:  # the dealer shows an ace
        d.card(code)
    prompt = d.table.prompt()
    assert prompt.target is not None and prompt.target["kind"] == "insurance"
    assert prompt.text == "Wait: players deciding on insurance and early surrender"


def test_classic6_says_the_steps_of_its_reshuffle_after_every_round() -> None:
    d = Driver(ruleset="classic6", single_source=True)
    d.shuffle(6)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(60)
    for code in ["5C", "TH", "7S", "8D"]:  # seat, dealer (hole first), seat, dealer: 18
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "shoe_change"
    prompt = d.table.prompt()
    assert prompt.action == "change_shoe"
    assert prompt.text == "Collect the cards, then shuffle all 6 decks and verify the count"
    d.shuffle(6)  # the shuffler's count is verified: the shoe is to be loaded
    assert (d.table.prompt().action, d.table.prompt().text) == ("change_shoe", "Load the shoe")
    d.load("S2")
    d.tick(0.1)
    assert d.table.phase == "betting"


def test_a_shoe_change_says_its_steps() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.manager(verb="shoe_change", reason="new decks")
    for code in ["TH", "7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "shoe_change"
    assert d.table.prompt().text == (
        "Change shoe: collect the cards, then shuffle and verify the count"
    )
    d.shuffle()
    assert d.table.prompt().text == "Load the shoe"
