"""GAME-FACTS figures recomputed here by other means than the code's, then compared.

The side bets' code enumerates multisets of card *types* (rank and suit); here
three-card hands are counted by *rank* multiset with suit patterns counted in
closed form, and Buster Blackjack by a plain recursion over the dealer's draws.
The targets are those of GAME-FACTS §2 and §3 at their stated precision.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import comb

import pytest

from studio.cards import Card, full_deck
from studio.certification.dealer import outcome_fractions, shoe_composition
from studio.certification.main_game import Action, GameRules, HandView, analyse
from studio.certification.rulesets import engine_policy, side_bet_result
from studio.certification.sidebets import (
    LOSE,
    buster_probabilities,
    classify_21_3,
    classify_lucky_lucky,
    classify_pair,
)
from studio.rules.paytables import (
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    SideBetKind,
    TwentyOnePlusThreePaytable,
)
from studio.rules.ruleset import RuleSet, preset
from studio.rules.sidebets import evaluate_21_plus_3, evaluate_lucky_lucky, evaluate_pairs


def _rules(decks: int, *, h17: bool = False) -> RuleSet:
    return preset("majority_speed").with_overrides(
        {"shoe": {"decks": decks}, "dealer": {"hits_soft_17": h17}}
    )


def _three_card_counts(
    decks: int, line_of: Callable[[list[int], bool], str]
) -> tuple[dict[str, int], int]:
    """Counts of every line over all 3-card hands, by rank multiset and suit pattern."""
    d = decks
    counts: dict[str, int] = {}
    total = 0
    for ranks in combinations_with_replacement(range(1, 14), 3):
        distinct = len(set(ranks))
        if distinct == 3:
            ways, suited = (4 * d) ** 3, 4 * d**3
        elif distinct == 2:
            ways, suited = comb(4 * d, 2) * 4 * d, 4 * comb(d, 2) * d
        else:
            ways, suited = comb(4 * d, 3), 4 * comb(d, 3)
        for flush, n in ((True, suited), (False, ways - suited)):
            if n:
                key = line_of(sorted(ranks), flush)
                counts[key] = counts.get(key, 0) + n
        total += ways
    assert total == comb(52 * d, 3)
    return counts, total


def _line_21_3(ranks: list[int], flush: bool) -> str:
    if len(set(ranks)) == 1:
        return "suited_trips" if flush else "three_of_a_kind"
    straight = len(set(ranks)) == 3 and (ranks[2] - ranks[0] == 2 or ranks == [1, 12, 13])
    if straight:
        return "straight_flush" if flush else "straight"
    return "flush" if flush else LOSE


def _line_lucky(ranks: list[int], flush: bool) -> str:
    if ranks == [7, 7, 7]:
        return "suited_777" if flush else "777"
    if ranks == [6, 7, 8]:
        return "suited_678" if flush else "678"
    hard = sum(min(r, 10) for r in ranks)
    total = hard + 10 if 1 in ranks and hard <= 11 else hard
    if total == 21:
        return "suited_21" if flush else "21"
    return str(total) if total in (19, 20) else LOSE


T3_PAYS = {"suited_trips": 100, "straight_flush": 40, "three_of_a_kind": 30, "straight": 10}
T3_PAYS["flush"] = 5
LL_PAYS = {"suited_777": 200, "suited_678": 100, "777": 50, "678": 25, "suited_21": 15}
LL_PAYS.update({"21": 3, "20": 2, "19": 2})


def _rtp(counts: dict[str, int], total: int, pays: dict[str, int]) -> Fraction:
    return sum(
        (Fraction(n * (pays[k] + 1), total) for k, n in counts.items() if k != LOSE), Fraction(0)
    )


@pytest.mark.parametrize("decks", [1, 2, 4, 6, 8])
def test_three_card_bets_line_by_line(decks: int) -> None:
    rules = _rules(decks)
    for kind, paytable, line_of, pays in (
        (SideBetKind.TWENTY_ONE_PLUS_THREE, TwentyOnePlusThreePaytable(), _line_21_3, T3_PAYS),
        (SideBetKind.LUCKY_LUCKY, LuckyLuckyPaytable(), _line_lucky, LL_PAYS),
    ):
        counts, total = _three_card_counts(decks, line_of)
        got = side_bet_result(kind, paytable, rules)
        assert got.total_combinations == total
        assert {ln.key: ln.combinations for ln in got.lines if ln.combinations} == counts
        assert got.rtp == _rtp(counts, total, pays)
        assert got.hit_frequency == Fraction(total - counts.get(LOSE, 0), total)


def test_three_card_rtps_are_game_facts_at_eight_decks() -> None:
    t3, total = _three_card_counts(8, _line_21_3)
    ll, _ = _three_card_counts(8, _line_lucky)
    assert round(float(_rtp(t3, total, T3_PAYS)) * 100, 4) == 96.2961
    assert round(float(_rtp(ll, total, LL_PAYS)) * 100, 4) == 96.0919


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_pair_bets_closed_form(decks: int) -> None:
    n, d = 52 * decks, decks
    total = comb(n, 2)
    perfect, coloured, mixed = 52 * comb(d, 2), 26 * d * d, 52 * d * d
    rtp = Fraction(perfect * 26 + coloured * 13 + mixed * 7, total)
    for kind in (SideBetKind.PERFECT_PAIRS, SideBetKind.PLAYERS_PAIR, SideBetKind.DEALERS_PAIR):
        got = side_bet_result(kind, PairPaytable(), _rules(decks))
        assert got.rtp == rtp
        assert got.hit_frequency == Fraction(perfect + coloured + mixed, total)
    if decks == 8:
        assert round(float(rtp) * 100, 4) == 95.9036
        assert (perfect, coloured, mixed, total) == (1456, 1664, 3328, 86320)


# --- Buster Blackjack and the dealer, by a plain recursion over her draws -----------------------


@cache
def _walk(
    rest: tuple[int, ...], hard: int, aces: bool, n: int, h17: bool
) -> dict[tuple[str, int], float]:
    """P(outcome, cards) for a dealer holding ``n`` cards (``hard``, ``aces``) drawing from ``rest``.

    ``rest`` is counts of values 1..10 (index 0 the ace). Floats: this is a check.
    """
    soft = aces and hard + 10 <= 21
    total = hard + 10 if soft else hard
    if n >= 2:
        if n == 2 and total == 21:
            return {("natural", 2): 1.0}
        if total > 21:
            return {("bust", n): 1.0}
        if total >= 18 or (total == 17 and not (soft and h17)):
            return {(str(total), n): 1.0}
    left = sum(rest)
    out: dict[tuple[str, int], float] = {}
    for v, k in enumerate(rest):
        if not k:
            continue
        nxt = list(rest)
        nxt[v] -= 1
        for key, p in _walk(tuple(nxt), hard + v + 1, aces or v == 0, n + 1, h17).items():
            out[key] = out.get(key, 0.0) + p * k / left
    return out


def _buster_rtp(decks: int, h17: bool) -> tuple[float, float, dict[tuple[int, bool], float]]:
    """(RTP, hit frequency, P(bust with k cards, player BJ)) of the GAME-FACTS paytable."""
    shoe = [4 * decks] * 9 + [16 * decks]
    n = sum(shoe)
    prob: dict[tuple[int, bool], float] = {}
    for a in range(10):
        for b in range(10):  # ordered player cards
            p_ab = shoe[a] / n * (shoe[b] - (a == b)) / (n - 1)
            if p_ab == 0:
                continue
            rest = list(shoe)
            rest[a] -= 1
            rest[b] -= 1
            bj = {a, b} == {0, 9}
            for (what, k), p in _walk(tuple(rest), 0, False, 0, h17).items():
                if what == "bust":
                    prob[k, bj] = prob.get((k, bj), 0.0) + p_ab * p

    def pays(k: int, bj: bool) -> int:
        if k <= 4:
            return 2
        if k == 5:
            return 4
        if k == 6:
            return 18
        if k == 7:
            return 800 if bj else 50
        return 2000 if bj else 250

    hit = sum(prob.values())
    rtp = sum(p * (pays(k, bj) + 1) for (k, bj), p in prob.items())
    return rtp, hit, prob


@pytest.mark.parametrize(("decks", "h17"), [(1, False), (1, True)])
def test_buster_against_a_plain_recursion(decks: int, h17: bool) -> None:
    rtp, hit, prob = _buster_rtp(decks, h17)
    got = side_bet_result(SideBetKind.BUSTER_BLACKJACK, BusterPaytable(), _rules(decks, h17=h17))
    assert float(got.rtp) == pytest.approx(rtp, abs=1e-12)
    assert float(got.hit_frequency) == pytest.approx(hit, abs=1e-12)
    code = buster_probabilities(decks, hits_soft_17=h17)
    assert set(code) == set(prob)
    for key, p in prob.items():
        assert float(code[key]) == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_buster_is_game_facts_at_eight_decks() -> None:
    rtp, hit, _ = _buster_rtp(8, False)
    assert round(rtp * 100, 3) == 93.866
    got = side_bet_result(SideBetKind.BUSTER_BLACKJACK, BusterPaytable(), preset("majority_speed"))
    assert float(got.rtp) == pytest.approx(rtp, abs=1e-12)
    assert float(got.hit_frequency) == pytest.approx(hit, abs=1e-12)


@pytest.mark.parametrize("decks", [1, 2])
@pytest.mark.parametrize("h17", [False, True])
def test_dealer_outcomes_against_a_plain_recursion(decks: int, h17: bool) -> None:
    """Every up card: the code's exact dealer probabilities, outcome by outcome."""
    names = ("17", "18", "19", "20", "21", "bust", "natural")
    for up in range(10):
        rest = list(shoe_composition(decks))
        rest[up] -= 1
        want: dict[str, float] = {}
        for (what, _), p in _walk(tuple(rest), up + 1, up == 0, 1, h17).items():
            want[what] = want.get(what, 0.0) + p
        got = outcome_fractions(tuple(rest), up, h17)
        for name, exact in zip(names, got, strict=True):
            assert float(exact) == pytest.approx(want.get(name, 0.0), abs=1e-13), (up, name)


# --- the certified classes are the ones the engine pays ----------------------------------------

_SUIT_INDEX = {"S": 0, "C": 1, "H": 2, "D": 3}  # sidebets._TYPES: 0/1 black, 2/3 red


def _cert_card(card: Card) -> tuple[int, int]:
    return card.rank_index, _SUIT_INDEX[card.suit]


@pytest.mark.parametrize(("ace_low", "ace_high"), [(True, True), (False, True), (True, False)])
def test_three_card_lines_and_pays_are_the_engines(ace_low: bool, ace_high: bool) -> None:
    """Every 3-card multiset: the engine's line and pay are the certification's line and pay."""
    distinct = {"suited_trips": 101, "straight_flush": 41, "three_of_a_kind": 31}
    distinct.update({"straight": 11, "flush": 7})
    t3 = TwentyOnePlusThreePaytable(
        **distinct, ace_low_straight=ace_low, ace_high_straight=ace_high
    )
    ll_fields = ("suited_777", "suited_678", "any_777", "any_678", "suited_21", "any_21")
    ll = LuckyLuckyPaytable(**{f: 300 - i for i, f in enumerate(ll_fields)}, any_20=9, any_19=8)
    rules = _rules(1)
    pays_t3 = {
        ln.key: ln.pays
        for ln in side_bet_result(SideBetKind.TWENTY_ONE_PLUS_THREE, t3, rules).lines
    }
    pays_ll = {ln.key: ln.pays for ln in side_bet_result(SideBetKind.LUCKY_LUCKY, ll, rules).lines}
    for a, b, up in combinations_with_replacement(full_deck(), 3):
        cert = tuple(_cert_card(c) for c in (a, b, up))
        hit = evaluate_21_plus_3([a, b], up, t3)
        key = classify_21_3(cert, ace_low, ace_high)
        assert (LOSE if hit is None else Fraction(hit.pays)) == (
            LOSE if key == LOSE else pays_t3[key]
        ), (a, b, up, key)
        hit = evaluate_lucky_lucky([a, b], up, ll)
        key = classify_lucky_lucky(cert)
        assert (LOSE if hit is None else Fraction(hit.pays)) == (
            LOSE if key == LOSE else pays_ll[key]
        ), (a, b, up, key)


def test_pair_lines_and_pays_are_the_engines() -> None:
    table = PairPaytable(perfect=31, coloured=13, mixed=5)
    result = side_bet_result(SideBetKind.PLAYERS_PAIR, table, _rules(1))
    pays = {ln.key: ln.pays for ln in result.lines}
    for a, b in combinations_with_replacement(full_deck(), 2):
        hit = evaluate_pairs([a, b], table)
        key = classify_pair((_cert_card(a), _cert_card(b)))
        assert (LOSE if hit is None else Fraction(hit.pays)) == (
            LOSE if key == LOSE else pays[key]
        ), (a, b, key)


# --- the main game: a whole round enumerated card by card, hole card included -------------------


def _best(hard: int, aces: bool) -> int:
    return hard + 10 if aces and hard + 10 <= 21 else hard


@cache
def _dealer_totals(rest: tuple[int, ...], hard: int, aces: bool, h17: bool) -> dict[int, float]:
    """The dealer's final total (22: bust) from two or more cards, drawing from ``rest``."""
    soft = aces and hard + 10 <= 21
    total = hard + 10 if soft else hard
    if total > 21:
        return {22: 1.0}
    if total >= 18 or (total == 17 and not (soft and h17)):
        return {total: 1.0}
    left = sum(rest)
    out: dict[int, float] = {}
    for v, k in enumerate(rest):
        if k:
            nxt = list(rest)
            nxt[v] -= 1
            for t, p in _dealer_totals(tuple(nxt), hard + v + 1, aces or v == 0, h17).items():
                out[t] = out.get(t, 0.0) + p * k / left
    return out


def _showdown(rest: tuple[int, ...], mine: int, dealer: tuple[int, bool], h17: bool) -> float:
    if mine > 21:
        return -1.0
    ev = 0.0
    for d, p in _dealer_totals(rest, dealer[0], dealer[1], h17).items():
        ev += p * (1.0 if d > 21 or d < mine else (-1.0 if d > mine else 0.0))
    return ev


@cache
def _player(
    rest: tuple[int, ...], hard: int, aces: bool, dealer: tuple[int, bool], h17: bool, limit: int
) -> float:
    """Hit while the total is below ``limit``, then stand."""
    total = _best(hard, aces)
    if total > 21 or total >= limit:
        return _showdown(rest, total, dealer, h17)
    left = sum(rest)
    ev = 0.0
    for v, k in enumerate(rest):
        if k:
            nxt = list(rest)
            nxt[v] -= 1
            ev += k / left * _player(tuple(nxt), hard + v + 1, aces or v == 0, dealer, h17, limit)
    return ev


def _double(
    rest: tuple[int, ...], hard: int, aces: bool, dealer: tuple[int, bool], h17: bool
) -> float:
    left = sum(rest)
    ev = 0.0
    for v, k in enumerate(rest):
        if k:
            nxt = list(rest)
            nxt[v] -= 1
            ev += (
                k
                / left
                * 2
                * _showdown(tuple(nxt), _best(hard + v + 1, aces or v == 0), dealer, h17)
            )
    return ev


def _round_ev(
    decks: int, h17: bool, limit: int, doubles: frozenset[int], eu: str | None = None
) -> float:
    """Up card, two player cards, hole card, then the player's and the dealer's draws.

    US peek on an ace and a ten (``eu`` None): a dealer natural takes the stake
    (pushes a player natural) before anyone acts. ``eu`` "all" / "return": no hole
    card; the player acts first (her draws come from the same shoe, so dealing the
    hole card first changes no probability) and a dealer natural then takes every
    stake, or with a ten up ("return") only the original one. A player natural
    pays 3:2.
    """
    shoe = [4 * decks] * 9 + [16 * decks]
    n = sum(shoe)
    ev = 0.0

    def take(s: list[int], v: int) -> list[int]:
        out = list(s)
        out[v] -= 1
        return out

    for u in range(10):
        s1 = take(shoe, u)
        for a in range(10):
            s2 = take(s1, a)
            for b in range(10):
                s3 = take(s2, b)
                for h in range(10):
                    w = shoe[u] / n * s1[a] / (n - 1) * s2[b] / (n - 2) * s3[h] / (n - 3)
                    if w == 0:
                        continue
                    rest = tuple(take(s3, h))
                    player_bj, dealer_bj = {a, b} == {0, 9}, {u, h} == {0, 9}
                    dealer = (u + h + 2, 0 in (u, h))
                    hard, aces = a + b + 2, 0 in (a, b)
                    doubled = not player_bj and _best(hard, aces) in doubles
                    if dealer_bj and eu is not None and doubled:
                        ev += w * (-1.0 if eu == "return" and u == 9 else -2.0)
                    elif dealer_bj:
                        ev += w * (0.0 if player_bj else -1.0)
                    elif player_bj:
                        ev += w * 1.5
                    elif doubled:
                        ev += w * _double(rest, hard, aces, dealer, h17)
                    else:
                        ev += w * _player(rest, hard, aces, dealer, h17, limit)
    return ev


class _HitBelow:
    """Hit below a total, double on some two-card totals; never split."""

    def __init__(self, limit: int, doubles: frozenset[int]) -> None:
        self.limit, self.doubles = limit, doubles

    def decide(self, view: HandView) -> Action:
        if view.can_double and view.total in self.doubles:
            return Action.DOUBLE
        return Action.HIT if view.total < self.limit and view.can_hit else Action.STAND

    def early_surrender(self, view: HandView) -> bool:
        return False


@pytest.mark.parametrize(
    ("h17", "limit", "doubles", "eu"),
    [
        (False, 12, frozenset(), None),
        (True, 15, frozenset({10, 11}), None),
        (False, 13, frozenset({9, 10, 11}), "all"),
        (False, 13, frozenset({9, 10, 11}), "return"),
    ],
)
def test_one_deck_round_against_a_card_by_card_enumeration(
    h17: bool, limit: int, doubles: frozenset[int], eu: str | None
) -> None:
    """The analysis' weights, peek or no hole card, and pays against a plain enumeration."""
    want = _round_ev(1, h17, limit, doubles, eu)
    us = eu is None
    rules = GameRules(
        decks=1,
        hits_soft_17=h17,
        split_allowed=False,
        peek_ace=us,
        peek_ten=us,
        ten_up_returns_extra_stakes=eu == "return",
    )
    got = analyse(rules, _HitBelow(limit, doubles)).expected_value
    assert got == pytest.approx(want, abs=1e-12)


# --- the strategy certified is GAME-FACTS' chart ------------------------------------------------

# GAME-FACTS §3, 8 decks S17 DAS, up cards 2..9, T, A (D: double else hit, Ds: else stand)
CHART = {
    "hard 17": "S S S S S S S S S S",
    "hard 16": "S S S S S H H H H H",
    "hard 13": "S S S S S H H H H H",
    "hard 12": "H H S S S H H H H H",
    "hard 11": "D D D D D D D D D H",
    "hard 10": "D D D D D D D D H H",
    "hard 9": "H D D D D H H H H H",
    "hard 8": "H H H H H H H H H H",
    "hard 5": "H H H H H H H H H H",
    "A,9": "S S S S S S S S S S",
    "A,8": "S S S S S S S S S S",
    "A,7": "S Ds Ds Ds Ds S S H H H",
    "A,6": "H D D D D H H H H H",
    "A,5": "H H D D D H H H H H",
    "A,4": "H H D D D H H H H H",
    "A,3": "H H H D D H H H H H",
    "A,2": "H H H D D H H H H H",
    "A,A": "P P P P P P P P P P",
    "8,8": "P P P P P P P P P P",
    "T,T": "S S S S S S S S S S",
    "9,9": "P P P P P S P P S S",
    "7,7": "P P P P P P H H H H",
    "6,6": "P P P P P H H H H H",
    "5,5": "D D D D D D D D H H",
    "4,4": "H H H P P H H H H H",
    "3,3": "P P P P P P H H H H",
    "2,2": "P P P P P P H H H H",
}


def test_the_certified_basic_strategy_is_the_game_facts_chart() -> None:
    policy = engine_policy(preset("majority_speed"))
    ups = [*range(1, 10), 0]  # value classes of 2..9, T, A
    letter = {Action.STAND: "S", Action.HIT: "H", Action.DOUBLE: "D", Action.SPLIT: "P"}
    for name, row in CHART.items():
        kind, _, rest = name.partition(" ")
        if kind == "hard":
            total, soft, pair = int(rest), False, None
        else:
            a, b = (1 if c == "A" else 10 if c == "T" else int(c) for c in name.split(","))
            pair = a - 1 if a == b else None
            soft = 1 in (a, b) and a + b + 10 <= 21
            total = a + b + 10 if soft else a + b
        for up, want in zip(ups, row.split(), strict=True):
            view = HandView(
                total=total,
                soft=soft,
                has_ace=soft or pair == 0,
                n_cards=2,
                pair=pair,
                is_pair=pair is not None,
                upcard=up,
                can_double=True,
                can_split=pair is not None,
                can_surrender=False,
                after_split=False,
            )
            assert letter[policy.decide(view)] == want[0], (name, up)
