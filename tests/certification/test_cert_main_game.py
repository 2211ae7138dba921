"""Main-game exact analysis: GAME-FACTS targets and brute force on tiny shoes."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from studio.certification.main_game import (
    Action,
    GameRules,
    HandView,
    MainGameResult,
    analyse,
)
from studio.certification.rulesets import engine_policy, game_rules
from studio.errors import RuleError
from studio.rules.ruleset import preset

# --- GAME-FACTS §3 targets -------------------------------------------------------------------


@cache
def optimal_play(rules: GameRules) -> MainGameResult:
    """Optimal play's analysis of ``rules``, computed once for the tests that check it."""
    return analyse(rules)


def test_classic6_house_edge_matches_game_facts() -> None:
    result = optimal_play(game_rules(preset("classic6")))
    assert round(result.house_edge * 100, 4) == 0.7932  # GAME-FACTS' precision


def test_majority_speed_us_house_edge_matches_game_facts() -> None:
    rules = preset("majority_speed")  # US peek, S17, DAS, split once, 8 decks
    result = analyse(game_rules(rules))
    assert round(result.house_edge * 100, 4) == 0.4858  # GAME-FACTS' precision
    assert result.seconds < 60


def test_basic_strategy_is_worse_than_composition_dependent() -> None:
    rules = preset("classic6")
    g = game_rules(rules)
    cd = optimal_play(g)
    td = analyse(g, engine_policy(rules))
    assert td.expected_value < cd.expected_value
    assert cd.expected_value - td.expected_value < 0.0002  # CD gains a few thousandths of %


def test_rule_effects_have_the_known_signs() -> None:
    base = GameRules(decks=8, double_after_split=True)
    ev = analyse(base).expected_value
    six_five = analyse(GameRules(decks=8, double_after_split=True, blackjack_pays=1.2))
    assert ev - six_five.expected_value == pytest.approx(0.3 * 0.0452, abs=0.0015)
    h17 = analyse(GameRules(decks=8, double_after_split=True, hits_soft_17=True))
    assert h17.expected_value < ev
    enhc = analyse(GameRules(decks=8, double_after_split=True, peek_ace=False, peek_ten=False))
    obo_ten = analyse(
        GameRules(
            decks=8,
            double_after_split=True,
            peek_ace=False,
            peek_ten=False,
            ten_up_returns_extra_stakes=True,
        )
    )
    assert enhc.expected_value < obo_ten.expected_value < ev
    late = analyse(GameRules(decks=8, double_after_split=True, surrender="late"))
    early = analyse(GameRules(decks=8, double_after_split=True, surrender="early"))
    assert ev < late.expected_value
    assert ev < early.expected_value


def test_unsupported_split_rules_are_refused_clearly() -> None:
    with pytest.raises(RuleError, match="max_hands"):
        GameRules(decks=8, split_max_hands=5)
    with pytest.raises(RuleError, match="ten-up"):
        GameRules(decks=8, split_max_hands=4, ten_up_returns_extra_stakes=True, peek_ten=False)
    # with a peek on tens the stake return never applies: fine
    GameRules(decks=8, split_max_hands=4, ten_up_returns_extra_stakes=True)


@pytest.mark.parametrize("up", [5, 9])
def test_resplit_pair_process_against_the_exact_single_split(up: int) -> None:
    from studio.certification.dealer import shoe_composition
    from studio.certification.main_game import _UpcardAnalysis

    rules = GameRules(decks=8, double_after_split=True, split_max_hands=4)
    ctx = _UpcardAnalysis(rules, shoe_composition(8), up)
    values = ctx.optimal_split_hands()
    for pair in range(10):
        once = ctx.split_value_once(pair, values)
        # the resplit method restricted to two hands reproduces the exact single split
        assert ctx.split_value_resplit(pair, values, 2) == pytest.approx(once, abs=1e-10)
    eights = 7
    two, three, four = (ctx.split_value_resplit(eights, values, h) for h in (2, 3, 4))
    assert two < three < four  # resplitting eights is worth something


# --- brute force on a tiny shoe --------------------------------------------------------------
# An independent, deliberately naive analysis: the hole card is dealt explicitly and the
# player's information is handled by its posterior; the dealer recursion walks card
# sequences. No splits (the tiny-shoe check covers stand/hit/double/surrender/charlie/peek).

TINY = (2, 1, 2, 1, 2, 1, 2, 1, 2, 6)


def _total(cards: tuple[int, ...]) -> tuple[int, bool]:
    hard = sum(c + 1 for c in cards)
    if 0 in cards and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def naive_ev(
    shoe: tuple[int, ...],
    *,
    h17: bool,
    peek: bool,
    charlie: int | None,
    obo: bool,
    surrender: bool,
    bj_pays: float = 1.5,
    stand_only: bool = False,
) -> float:
    def dealer(rest: tuple[int, ...], cards: tuple[int, ...]) -> tuple[float, ...]:
        return _brute_dealer(rest, cards, h17)

    def is_bj(x: int, y: int) -> bool:
        return {x, y} == {0, 9}

    ev_total = 0.0
    n0 = sum(shoe)
    for u in range(10):
        if not shoe[u]:
            continue
        s1 = list(shoe)
        s1[u] -= 1

        @cache
        def posterior(rest: tuple[int, ...]) -> tuple[float, ...]:
            """Hole-card distribution given the cards seen (no natural, if peeked)."""
            w = [0.0 if (peek and is_bj(u, h)) else float(rest[h]) for h in range(10)]  # noqa: B023
            z = sum(w)
            return tuple(x / z for x in w)

        def dealer_result(rest: tuple[int, ...], total: int, stake: float) -> float:
            """Value of standing on ``total`` (stake ``stake``), hole card unknown."""
            post = posterior(rest)
            out = 0.0
            for h in range(10):
                if not post[h]:
                    continue
                after = list(rest)
                after[h] -= 1
                if is_bj(u, h):  # noqa: B023
                    out += post[h] * (-1.0 if obo and u == 9 else -stake)  # noqa: B023
                    continue
                dist = dealer(tuple(after), tuple(sorted((u, h))))  # noqa: B023
                val = dist[5]
                for i in range(5):
                    d = 17 + i
                    val += dist[i] * (1 if total > d else (-1 if total < d else 0))
                out += post[h] * stake * val
            return out

        def charlie_result(rest: tuple[int, ...], stake: float) -> float:
            post = posterior(rest)
            bj = sum(post[h] for h in range(10) if is_bj(u, h))  # noqa: B023
            loss = -1.0 if obo and u == 9 else -stake  # noqa: B023
            return (1 - bj) * stake + bj * loss

        def draw_probs(rest: tuple[int, ...]) -> list[float]:
            post = posterior(rest)
            n = sum(rest)
            return [
                sum(post[h] * (rest[c] - (h == c)) / (n - 1) for h in range(10)) for c in range(10)
            ]

        def settle(rest: tuple[int, ...], cards: tuple[int, ...], stake: float) -> float:
            total, _ = _total(cards)
            if total > 21:
                return -stake
            if charlie is not None and len(cards) >= charlie:
                return charlie_result(rest, stake)
            return dealer_result(rest, total, stake)

        @cache
        def best(rest: tuple[int, ...], cards: tuple[int, ...]) -> float:
            stand = settle(rest, cards, 1.0)
            total, _ = _total(cards)
            if total >= 21 or (charlie is not None and len(cards) >= charlie):
                return stand
            if stand_only:
                return stand
            return max(stand, hit(rest, cards))

        def hit(rest: tuple[int, ...], cards: tuple[int, ...]) -> float:
            out = 0.0
            for c, p in enumerate(draw_probs(rest)):
                if p:
                    nxt = list(rest)
                    nxt[c] -= 1
                    new = tuple(sorted((*cards, c)))
                    tot, _ = _total(new)
                    out += p * (-1.0 if tot > 21 else best(tuple(nxt), new))
            return out

        def double(rest: tuple[int, ...], cards: tuple[int, ...]) -> float:
            out = 0.0
            for c, p in enumerate(draw_probs(rest)):
                if p:
                    nxt = list(rest)
                    nxt[c] -= 1
                    out += p * settle(tuple(nxt), tuple(sorted((*cards, c))), 2.0)
            return out

        for a in range(10):
            for b in range(10):
                s2 = list(s1)
                if not s2[a]:
                    continue
                pa = s2[a] / (n0 - 1)
                s2[a] -= 1
                if not s2[b]:
                    continue
                pb = s2[b] / (n0 - 2)
                s2[b] -= 1
                rest = tuple(s2)
                weight = shoe[u] / n0 * pa * pb
                n = sum(rest)
                p_nat = (rest[9] if u == 0 else rest[0] if u == 9 else 0) / n
                if is_bj(a, b):
                    value = (1 - p_nat) * bj_pays
                else:
                    cards = tuple(sorted((a, b)))
                    options = [best(rest, cards)]
                    if not stand_only:
                        options.append(double(rest, cards))
                        if surrender:
                            options.append(-0.5)
                    if peek and u in (0, 9):
                        value = -p_nat + (1 - p_nat) * max(options)
                    else:
                        value = max(options)
                ev_total += weight * value
    return ev_total


class _AlwaysStand:
    def decide(self, view: HandView) -> Action:
        return Action.STAND

    def early_surrender(self, view: HandView) -> bool:
        return False


@pytest.mark.parametrize(
    ("h17", "peek", "charlie", "obo", "surrender"),
    [
        (False, True, None, False, False),
        (True, True, 5, False, True),
        (False, False, None, False, False),
        (True, False, 4, True, True),
    ],
)
def test_tiny_shoe_matches_brute_force(
    h17: bool, peek: bool, charlie: int | None, obo: bool, surrender: bool
) -> None:
    rules = GameRules(
        decks=1,
        hits_soft_17=h17,
        peek_ace=peek,
        peek_ten=peek,
        split_allowed=False,
        charlie_cards=charlie,
        ten_up_returns_extra_stakes=obo,
        surrender="late" if surrender else "none",
    )
    exact = analyse(rules, shoe=TINY).expected_value
    brute = naive_ev(TINY, h17=h17, peek=peek, charlie=charlie, obo=obo, surrender=surrender)
    assert exact == pytest.approx(brute, abs=1e-12)


def test_tiny_shoe_policy_evaluation_matches_brute_force() -> None:
    rules = GameRules(decks=1, split_allowed=False)
    exact = analyse(rules, _AlwaysStand(), shoe=TINY).expected_value
    brute = naive_ev(
        TINY, h17=False, peek=True, charlie=None, obo=False, surrender=False, stand_only=True
    )
    assert exact == pytest.approx(brute, abs=1e-12)


# --- splits: the two hands dealt one after the other, explicitly --------------------------------


class _HitBelow17:
    """A policy that depends only on the hand's own total: hit below 17, never double."""

    def decide(self, view: HandView) -> Action:
        return Action.HIT if view.total < 17 else Action.STAND

    def early_surrender(self, view: HandView) -> bool:
        return False


def brute_split(shoe: tuple[int, ...], up: int, pair: int, *, peek: bool, h17: bool) -> float:
    """E[(both split hands' result) * 1{no dealer natural if peeked}], dealt in real order:
    hole card, hand 1 (second card and hits), hand 2, dealer draws."""

    def natural(x: int, y: int) -> bool:
        return {x, y} == {0, 9}

    def dealer(rest: tuple[int, ...], cards: tuple[int, ...]) -> tuple[float, ...]:
        return _brute_dealer(rest, cards, h17)

    def versus(total: int, dist: tuple[float, ...]) -> float:
        val = dist[5]
        for i in range(5):
            val += dist[i] * ((total > 17 + i) - (total < 17 + i))
        return val

    @cache
    def play(rest: tuple[int, ...], hole: int, hands: tuple[tuple[int, ...], ...]) -> float:
        """Expected result once ``hands`` are final except possibly the last one."""
        if len(hands) <= 2:
            cards = hands[-1]
            total, _ = _total(cards)
            if len(cards) < 2 or (total < 17 and not (pair == 0 and len(cards) >= 2)):
                n = sum(rest)
                out = 0.0
                for c in range(10):
                    if rest[c]:
                        new = tuple(sorted((*cards, c)))
                        out += rest[c] / n * play(_take(rest, c), hole, (*hands[:-1], new))
                return out
            if len(hands) == 1:
                return play(rest, hole, (*hands, (pair,)))
        # both hands final: the dealer plays (natural only if not peeked)
        if natural(up, hole):
            return sum(-1.0 for _ in hands)
        dist = dealer(rest, tuple(sorted((up, hole))))
        out = 0.0
        for cards in hands:
            total, _ = _total(cards)
            out += -1.0 if total > 21 else versus(total, dist)
        return out

    return _over_hole_cards(
        shoe, up, pair, peek, lambda rest, h: play(_take(rest, h), h, ((pair,),))
    )


@pytest.mark.parametrize(
    ("up", "pair", "peek"), [(8, 6, True), (9, 6, True), (0, 2, True), (9, 4, False), (4, 0, True)]
)
def test_split_value_matches_sequential_deal(up: int, pair: int, peek: bool) -> None:
    from studio.certification.main_game import _UpcardAnalysis

    rules = GameRules(decks=1, peek_ace=peek, peek_ten=peek)
    ctx = _UpcardAnalysis(rules, TINY, up)
    exact = ctx.split_value(pair, ctx.policy_values(_HitBelow17()))
    brute = brute_split(TINY, up, pair, peek=peek, h17=False)
    assert exact == pytest.approx(brute, abs=1e-12)


def brute_resplit(
    shoe: tuple[int, ...], up: int, pair: int, max_hands: int, *, peek: bool
) -> float:
    """Split with resplits to ``max_hands``, dealt in the real order, split hands played
    by ``_HitBelow17``, dealer S17. Finished hands are kept as totals only."""
    return _over_hole_cards(
        shoe,
        up,
        pair,
        peek,
        lambda rest, h: _brute_resplit_given_hole(shoe, up, pair, max_hands, h),
    )


def _over_hole_cards(
    shoe: tuple[int, ...],
    up: int,
    pair: int,
    peek: bool,
    value: Callable[[tuple[int, ...], int], float],
) -> float:
    """The expectation of ``value(rest, hole)`` over the dealer's hole card, dealt from
    ``shoe`` less the up card and the pair (``rest``, the hole still in it); with ``peek``,
    a hole card that makes a natural is not played (the round ends at the peek)."""
    rest0 = list(shoe)
    rest0[up] -= 1
    rest0[pair] -= 2
    rest = tuple(rest0)
    n0 = sum(rest0)
    result = 0.0
    for h in range(10):
        if not rest0[h] or (peek and {up, h} == {0, 9}):
            continue
        result += rest0[h] / n0 * value(rest, h)
    return result


def _take(rest: tuple[int, ...], c: int) -> tuple[int, ...]:
    return (*rest[:c], rest[c] - 1, *rest[c + 1 :])


_hand_total = cache(_total)  # the brute forces below ask for the same hands again and again


@cache
def _brute_dealer(rest: tuple[int, ...], cards: tuple[int, ...], h17: bool) -> tuple[float, ...]:
    """The dealer's final totals 17..21 and bust from ``cards``, drawn one by one."""
    total, soft = _total(cards)
    out = [0.0] * 6
    if total > 21:
        out[5] = 1.0
        return tuple(out)
    if total > 17 or (total == 17 and not (soft and h17)):
        out[total - 17] = 1.0
        return tuple(out)
    n = sum(rest)
    for c in range(10):
        if rest[c]:
            sub = _brute_dealer(_take(rest, c), tuple(sorted((*cards, c))), h17)
            for i in range(6):
                out[i] += rest[c] / n * sub[i]
    return tuple(out)


@cache
def _brute_resplit_given_hole(
    shoe: tuple[int, ...], up: int, pair: int, max_hands: int, hole: int
) -> float:
    """``brute_resplit`` once the hole card is dealt. The peek only decides which hole
    cards count, so the peeked and unpeeked cases share these (the 4-hand ones are slow)."""

    take = _take

    @cache
    def standing(rest: tuple[int, ...]) -> dict[int, float]:
        """The result of a hand standing on 17..21 (it never stands on less) against the
        dealer's play."""
        dist = _brute_dealer(rest, tuple(sorted((up, hole))), False)
        return {
            t: dist[5] + sum(dist[k] * ((t > 17 + k) - (t < 17 + k)) for k in range(5))
            for t in range(17, 22)
        }

    @cache
    def play(
        rest: tuple[int, ...],
        done: tuple[int, ...],
        cur: tuple[int, ...],
        pending: int,
        hands: int,
    ) -> float:
        out = 0.0
        if len(cur) == 1:  # the second card of the current hand
            n = sum(rest)
            for c in range(10):
                if not rest[c]:
                    continue
                if c == pair and hands < max_hands:
                    nxt = play(take(rest, c), done, cur, pending + 1, hands + 1)
                else:
                    nxt = play(take(rest, c), done, (pair, c), pending, hands)
                out += rest[c] / n * nxt
            return out
        total, _ = _hand_total(cur)
        if total < 17:
            n = sum(rest)
            for c in range(10):
                if rest[c]:
                    new = tuple(sorted((*cur, c)))
                    out += rest[c] / n * play(take(rest, c), done, new, pending, hands)
            return out
        finished = tuple(sorted((*done, min(total, 22))))
        if pending:
            return play(rest, finished, (pair,), pending - 1, hands)
        if {up, hole} == {0, 9}:
            return -float(len(finished))
        results = standing(rest)
        for t in finished:
            if t > 21:
                out -= 1.0
            else:
                out += results[t]
        return out

    rest = list(shoe)
    rest[up] -= 1
    rest[pair] -= 2
    rest[hole] -= 1
    return play(tuple(rest), (), (pair,), 1, 2)


# four eights, 18 cards: enough that no deal can exhaust the shoe
RESPLIT_SHOE = (1, 1, 2, 1, 2, 1, 1, 4, 1, 4)


@pytest.mark.parametrize(
    ("max_hands", "up", "peek"),
    [
        (3, 4, True),
        pytest.param(4, 9, True, marks=pytest.mark.slow),
        pytest.param(4, 9, False, marks=pytest.mark.slow),
    ],
)
def test_resplit_value_matches_sequential_deal(max_hands: int, up: int, peek: bool) -> None:
    from studio.certification.main_game import _UpcardAnalysis

    rules = GameRules(decks=1, peek_ace=peek, peek_ten=peek, split_max_hands=4)
    ctx = _UpcardAnalysis(rules, RESPLIT_SHOE, up)
    eights = 7
    exact = ctx.split_value_resplit(eights, ctx.policy_values(_HitBelow17()), max_hands)
    brute = brute_resplit(RESPLIT_SHOE, up, eights, max_hands, peek=peek)
    assert exact == pytest.approx(brute, abs=1e-12)
