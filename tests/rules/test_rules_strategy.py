"""The basic-strategy generator reproduces the GAME-FACTS 8-deck S17 DAS chart."""

from __future__ import annotations

from studio.cards import parse_card
from studio.rules.ruleset import preset
from studio.rules.strategy import Action, best_action, chart, strategy_for

# GAME-FACTS.md §3, "8 decks, S17, DAS, no surrender", dealer 2 3 4 5 6 7 8 9 T A.
PUBLISHED = """
hard 17+   S S S S S S S S S S
hard 13-16 S S S S S H H H H H
hard 12    H H S S S H H H H H
hard 11    D D D D D D D D D H
hard 10    D D D D D D D D H H
hard 9     H D D D D H H H H H
hard 5-8   H H H H H H H H H H
9,9        P P P P P S P P S S
6,6        P P P P P H H H H H
4,4        H H H P P H H H H H
A,8 A,9    S S S S S S S S S S
A,7        S Ds Ds Ds Ds S S H H H
A,6        H D D D D H H H H H
A,4 A,5    H H D D D H H H H H
A,2 A,3    H H H D D H H H H H
A,A 8,8    P P P P P P P P P P
T,T        S S S S S S S S S S
7,7        P P P P P P H H H H
5,5        D D D D D D D D H H
2,2 3,3    P P P P P P H H H H
"""


def _expand(label: str) -> list[str]:
    """Row label of the published chart -> row names of :func:`chart`."""
    if label.startswith("hard "):
        span = label[5:]
        if span.endswith("+"):
            return [f"hard {v}" for v in range(int(span[:-1]), 20)]
        if "-" in span:
            low, high = span.split("-")
            return [f"hard {v}" for v in range(int(low), int(high) + 1)]
        return [f"hard {span}"]
    rows = []
    for part in label.split():
        a, b = part.split(",")
        rows.append(f"soft A,{b}" if a == "A" and b != "A" else f"pair {a},{b}")
    return rows


def _published() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in PUBLISHED.strip().splitlines():
        cells = line.split()
        codes = cells[-10:]
        label = " ".join(cells[:-10])
        for row in _expand(label):
            out[row] = codes
    return out


def test_generator_reproduces_the_8_deck_s17_das_chart_exactly() -> None:
    generated = chart(preset("majority_speed").with_overrides({"charlie_cards": None}))
    published = _published()
    assert len(published) == 15 + 8 + 10  # hard 5..19, soft A,2..A,9, ten pairs
    mismatches = {
        row: (published[row], generated[row])
        for row in published
        if published[row] != generated[row]
    }
    assert not mismatches


def test_h17_six_decks_doubles_11_against_an_ace() -> None:
    rows = chart(preset("classic6"))
    assert rows["hard 11"][-1] == "D"  # H17: double 11 v A
    assert rows["soft A,8"][4] == "Ds"  # H17: double soft 19 v 6
    assert rows["pair 6,6"][0] == "H"  # no DAS: hit 6,6 v 2
    assert rows["pair 4,4"][3] == "H"  # no DAS: hit 4,4 v 5


def test_best_action_respects_legal_actions() -> None:
    rules = preset("majority_speed")
    hand = [parse_card("5H"), parse_card("6C")]
    up = parse_card("6D")
    assert best_action(rules, hand, up, [Action.HIT, Action.STAND, Action.DOUBLE]) is Action.DOUBLE
    assert best_action(rules, hand, up, [Action.HIT, Action.STAND]) is Action.HIT
    three = [parse_card("5H"), parse_card("4C"), parse_card("3D")]
    assert best_action(rules, three, parse_card("TD"), [Action.HIT, Action.STAND]) is Action.HIT


def test_late_surrender_and_insurance_advice() -> None:
    rules = preset("clubhouse").with_overrides({"surrender": "late"})
    hand = [parse_card("TH"), parse_card("6C")]
    legal = [Action.HIT, Action.STAND, Action.DOUBLE, Action.SURRENDER]
    assert best_action(rules, hand, parse_card("TD"), legal) is Action.SURRENDER
    assert not strategy_for(rules).take_insurance(1)


def test_early_surrender_against_an_ace() -> None:
    s = strategy_for(preset("clubhouse"))
    assert s.early_surrender(16, False, 1, pair=False)  # 16 v A: surrender early
    assert not s.early_surrender(11, False, 1, pair=False)  # 11 v A: play on


def test_a_split_hand_dealt_another_pair_card_is_split_again_when_allowed() -> None:
    rules = preset("majority_speed").with_overrides(
        {"split": {"max_hands": 4, "resplit_aces": True}}
    )
    six = parse_card("6D")
    legal = [Action.HIT, Action.STAND, Action.DOUBLE, Action.SPLIT]
    eights = [parse_card("8H"), parse_card("8C")]
    assert best_action(rules, eights, six, legal, after_split=True) is Action.SPLIT
    tens = [parse_card("TH"), parse_card("KC")]
    assert best_action(rules, tens, six, legal, after_split=True) is Action.STAND
    # a split ace dealt another ace (one card each) may only stand or split again
    aces = [parse_card("AH"), parse_card("AC")]
    one_card = [Action.STAND, Action.SPLIT]
    assert best_action(rules, aces, six, one_card, after_split=True) is Action.SPLIT
    # at the hand limit the caller leaves SPLIT out: 8,8 v 6 then stands
    no_split = [Action.HIT, Action.STAND, Action.DOUBLE]
    assert best_action(rules, eights, six, no_split, after_split=True) is Action.STAND


def test_a_resplit_is_the_split_decision_of_the_same_pair() -> None:
    # the after-split decision values a resplit as the first split is valued (two hands
    # not split again), so the two decisions agree for every pair and up card
    rules = preset("majority_speed").with_overrides({"split": {"max_hands": 4}})
    strategy = strategy_for(rules)
    legal = [Action.HIT, Action.STAND, Action.DOUBLE, Action.SPLIT]
    for pair in range(1, 11):
        for up in (2, 3, 4, 5, 6, 7, 8, 9, 10, 1):
            first = strategy.best(2 * pair, pair == 1, 2, up, legal, pair=True)
            again = strategy.best(2 * pair, pair == 1, 2, up, legal, pair=True, after_split=True)
            assert (first is Action.SPLIT) == (again is Action.SPLIT), (pair, up)
