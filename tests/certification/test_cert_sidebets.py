"""Side-bet exact returns: GAME-FACTS targets, brute force on small shoes, any paytable."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations

import pytest

from studio.cards import full_deck
from studio.certification.dealer import (
    OUTCOMES,
    dealer_graph,
    hand_total,
    outcome_fractions,
    outcome_matrix,
    shoe_composition,
)
from studio.certification.rulesets import side_bet_result, side_bet_results
from studio.certification.sidebets import (
    BusterLineSpec,
    buster_blackjack,
    buster_probabilities,
    classify_21_3,
    classify_lucky_lucky,
    classify_pair,
    lucky_lucky,
    pair_bet,
    twenty_one_plus_three,
)
from studio.errors import RuleError
from studio.rules.paytables import PairPaytable, SideBetKind
from studio.rules.round import CardFor, NextCard, Round
from studio.rules.ruleset import preset

PP = {"perfect": 25, "coloured": 12, "mixed": 6}
T3 = {"suited_trips": 100, "straight_flush": 40, "three_of_a_kind": 30, "straight": 10, "flush": 5}
LL = {
    "suited_777": 200,
    "suited_678": 100,
    "777": 50,
    "678": 25,
    "suited_21": 15,
    "21": 3,
    "20": 2,
    "19": 2,
}


def _pct4(x: Fraction) -> float:
    return round(float(x) * 100, 4)


# --- GAME-FACTS §2 ----------------------------------------------------------------------------


def test_perfect_pairs_eight_decks() -> None:
    r = pair_bet(8, PP)
    assert _pct4(r.rtp) == 95.9036
    combos = {ln.key: ln.combinations for ln in r.lines}
    assert combos == {"perfect": 1456, "coloured": 1664, "mixed": 3328, "lose": 79872}
    assert r.total_combinations == 86320


def test_twenty_one_plus_three_eight_decks() -> None:
    assert _pct4(twenty_one_plus_three(8, T3).rtp) == 96.2961


def test_lucky_lucky_eight_decks() -> None:
    assert _pct4(lucky_lucky(8, LL).rtp) == 96.0919


def test_buster_blackjack_eight_decks_s17() -> None:
    lines = [
        BusterLineSpec(3, 4, 2, 2),
        BusterLineSpec(5, 5, 4, 4),
        BusterLineSpec(6, 6, 18, 18),
        BusterLineSpec(7, 7, 50, 800),
        BusterLineSpec(8, None, 250, 2000),
    ]
    r = buster_blackjack(8, lines, hits_soft_17=False)
    assert round(float(r.rtp) * 100, 3) == 93.866
    assert sum(ln.probability for ln in r.lines) == 1


def test_presets_side_bets_through_the_rule_set() -> None:
    got = {kind: _pct4(res.rtp) for kind, res in side_bet_results(preset("majority_speed"))}
    assert got[SideBetKind.TWENTY_ONE_PLUS_THREE] == 96.2961
    assert got[SideBetKind.PLAYERS_PAIR] == 95.9036
    assert got[SideBetKind.DEALERS_PAIR] == 95.9036
    assert got[SideBetKind.LUCKY_LUCKY] == 96.0919
    assert round(got[SideBetKind.BUSTER_BLACKJACK], 3) == 93.866
    club = {kind: _pct4(res.rtp) for kind, res in side_bet_results(preset("clubhouse"))}
    assert club == {SideBetKind.PERFECT_PAIRS: 95.9036, SideBetKind.TWENTY_ONE_PLUS_THREE: 96.2961}


# --- any paytable, any deck count ---------------------------------------------------------------


def test_any_paytable_is_exact_linear_in_the_pays() -> None:
    rules = preset("clubhouse").with_overrides(
        {"side_bets": {"perfect_pairs": {"paytable": {"kind": "pairs", "perfect": "30"}}}}
    )
    res = side_bet_result(
        SideBetKind.PERFECT_PAIRS, rules.side_bets[SideBetKind.PERFECT_PAIRS].paytable, rules
    )
    assert res.rtp == 1 + Fraction(1456 * 30 + 1664 * 12 + 3328 * 6 - 79872, 86320)


def test_fractional_pays_are_exact() -> None:
    r = pair_bet(6, {"perfect": "25.5", "coloured": 12, "mixed": 6})
    perfect = next(ln for ln in r.lines if ln.key == "perfect")
    assert perfect.pays == Fraction(51, 2)
    assert r.rtp.denominator > 1


@pytest.mark.parametrize("decks", [1, 2, 6])
def test_pairs_closed_form(decks: int) -> None:
    r = pair_bet(decks, PP)
    n = 52 * decks
    total = n * (n - 1) // 2
    perfect = 52 * decks * (decks - 1) // 2
    coloured = 13 * 2 * decks * decks
    mixed = 13 * 4 * decks * decks
    combos = {ln.key: ln.combinations for ln in r.lines}
    assert combos == {
        "perfect": perfect,
        "coloured": coloured,
        "mixed": mixed,
        "lose": total - perfect - coloured - mixed,
    }


def test_single_deck_has_no_perfect_pair_or_suited_trips() -> None:
    assert next(ln for ln in pair_bet(1, PP).lines if ln.key == "perfect").combinations == 0
    lines = {ln.key: ln.combinations for ln in twenty_one_plus_three(1, T3).lines}
    assert lines["suited_trips"] == 0
    assert lines["three_of_a_kind"] == 13 * 4  # C(4,3) per rank


def _code_card(code: str) -> tuple[int, int]:
    rank = "A23456789TJQK".index(code[0]) + 1
    return rank, "SCHD".index(code[1])  # 0/1 black, 2/3 red as in sidebets._TYPES


def test_three_card_bets_match_brute_force_over_two_decks() -> None:
    cards = [_code_card(c.code) for c in full_deck()] * 2  # 104 physical cards
    counts_t3: Counter[str] = Counter()
    counts_ll: Counter[str] = Counter()
    counts_pp: Counter[str] = Counter()
    for trio in combinations(range(len(cards)), 3):
        hand = tuple(cards[i] for i in trio)
        counts_t3[classify_21_3(hand)] += 1
        counts_ll[classify_lucky_lucky(hand)] += 1
    for pair in combinations(range(len(cards)), 2):
        counts_pp[classify_pair(tuple(cards[i] for i in pair))] += 1
    t3 = {ln.key: ln.combinations for ln in twenty_one_plus_three(2, T3).lines if ln.combinations}
    ll = {ln.key: ln.combinations for ln in lucky_lucky(2, LL).lines if ln.combinations}
    pp = {ln.key: ln.combinations for ln in pair_bet(2, PP).lines if ln.combinations}
    assert t3 == dict(counts_t3)
    assert ll == dict(counts_ll)
    assert pp == dict(counts_pp)


def test_straight_options() -> None:
    assert classify_21_3(((1, 0), (2, 1), (3, 2))) == "straight"
    assert classify_21_3(((1, 0), (12, 1), (13, 2))) == "straight"
    assert classify_21_3(((1, 0), (2, 1), (13, 2))) == "lose"  # K-A-2
    assert classify_21_3(((1, 0), (12, 1), (13, 2)), ace_high=False) == "lose"
    with_no_qka = twenty_one_plus_three(8, T3, ace_high_straight=False)
    assert with_no_qka.rtp < twenty_one_plus_three(8, T3).rtp


def test_lucky_lucky_totals() -> None:
    assert classify_lucky_lucky(((1, 0), (1, 1), (9, 2))) == "21"  # A-A-9
    assert classify_lucky_lucky(((7, 0), (7, 0), (7, 0))) == "suited_777"
    assert classify_lucky_lucky(((6, 2), (7, 2), (8, 2))) == "suited_678"
    assert classify_lucky_lucky(((13, 1), (1, 1), (10, 1))) == "suited_21"
    assert classify_lucky_lucky(((13, 1), (9, 2), (1, 1))) == "20"


def test_unknown_paytable_line_is_refused() -> None:
    with pytest.raises(RuleError, match="unknown paytable line"):
        pair_bet(8, {"perfect": 25, "royal": 100})


def test_pair_paytable_model_defaults_are_game_facts() -> None:
    res = side_bet_result(SideBetKind.PLAYERS_PAIR, PairPaytable(), preset("majority_speed"))
    assert _pct4(res.rtp) == 95.9036


# --- the dealer recursion against explicit enumeration -----------------------------------------


def _naive_dealer(shoe: tuple[int, ...], up: int | None, h17: bool) -> list[Fraction]:
    """Walk every dealer card sequence explicitly, with exact fractions."""
    out = [Fraction(0)] * len(OUTCOMES)

    @cache
    def walk(rest: tuple[int, ...], hand: tuple[int, ...]) -> tuple[Fraction, ...]:
        res = [Fraction(0)] * len(OUTCOMES)
        n_cards = sum(hand)
        if n_cards >= 2:
            total, soft = hand_total(hand)
            if n_cards == 2 and total == 21:
                res[6] = Fraction(1)
                return tuple(res)
            if total > 21:
                res[5] = Fraction(1)
                return tuple(res)
            if total > 17 or (total == 17 and not (soft and h17)):
                res[total - 17] = Fraction(1)
                return tuple(res)
        n = sum(rest)
        for c in range(10):
            if rest[c]:
                nr = list(rest)
                nr[c] -= 1
                nh = list(hand)
                nh[c] += 1
                sub = walk(tuple(nr), tuple(nh))
                for i in range(len(res)):
                    res[i] += Fraction(rest[c], n) * sub[i]
        return tuple(res)

    start = [0] * 10
    if up is not None:
        start[up] = 1
    for i, p in enumerate(walk(shoe, tuple(start))):
        out[i] += p
    return out


SMALL_SHOES = [
    (4, 4, 4, 4, 4, 4, 4, 4, 4, 16),  # one deck
    (1, 3, 2, 4, 1, 2, 3, 1, 2, 5),  # an odd partial shoe
]


@pytest.mark.parametrize("shoe", SMALL_SHOES)
@pytest.mark.parametrize("h17", [False, True])
@pytest.mark.parametrize("up", [None, 0, 4, 9])
def test_dealer_recursion_matches_explicit_enumeration(
    shoe: tuple[int, ...], h17: bool, up: int | None
) -> None:
    rest = list(shoe)
    if up is not None:
        rest[up] -= 1
    exact = outcome_fractions(rest, up, h17)
    naive = _naive_dealer(tuple(rest), up, h17)
    assert list(exact) == naive
    if up is not None:
        import numpy as np

        floats = outcome_matrix(np.array([rest]), up, h17)[0]
        assert floats.tolist() == pytest.approx([float(x) for x in naive], abs=1e-14)


def test_dealer_graph_weights_cover_every_order() -> None:
    # With an infinite supply of each class, probabilities would sum to one; with a full
    # one-deck shoe they must too (the dealer never runs out of cards).
    for up in range(10):
        rest = list(shoe_composition(1))
        rest[up] -= 1
        assert sum(outcome_fractions(rest, up, True)) == 1
    assert len(dealer_graph(None, False).terminals) > 1000


def test_buster_probabilities_sum_to_dealer_bust_rate() -> None:
    probs = buster_probabilities(1, hits_soft_17=True)
    assert all(k >= 3 for k, _ in probs)
    assert 0.25 < float(sum(probs.values())) < 0.32


def test_buster_figure_has_the_dealer_play_out_as_the_engine_does() -> None:
    """The figure assumes the dealer plays out her hand. Seed 004's dealer does not draw when
    every hand at the table is bust, but while a Buster bet is live the engine (logic 3)
    has her play out, so the figure is the table's, whatever the number of boxes."""
    rules = preset("majority_speed")
    kind = SideBetKind.BUSTER_BLACKJACK
    result = side_bet_result(kind, rules.side_bets[kind].paytable, rules)
    assert "dealer stands on soft 17 and plays out her hand" in result.notes
    assert not any("does not draw" in note for note in result.notes)
    rnd = Round(rules)
    rnd.open_betting()
    rnd.place_wager(1, "a", "10", side_bets={"buster_blackjack": "5"}, auto_consent=True)
    rnd.close_betting()
    for code in ["TC", "TH", "6C", "5H", "9S"]:  # the lone hand busts (16 v T hits)
        rnd.deal(code)
    assert not rnd.any_live_hand() and rnd.next_card() == NextCard(CardFor.DEALER_DRAW)
