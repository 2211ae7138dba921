"""Basic strategy computed from the rules (total-dependent, shoe composition).

Nothing here is a hard-coded chart. For a rule set and each dealer up card:

1. the dealer's final-total distribution (17..21 or bust) is computed by
   exact recursion, drawing without replacement from the shoe less the up
   card, with the rule set's drawing rule (S17/H17), conditional on no
   dealer blackjack; and likewise with one more card of each value removed,
   which gives each card's exact effect of removal;
2. a two-card hand's expected values of standing, hitting, doubling,
   splitting and surrendering are computed by recursion over the player's
   draws, depleting the shoe by every card the player holds, with the
   dealer's distribution corrected linearly by the effects of removal of
   those cards (:class:`CompositionEvaluator`);
3. the decision is total-dependent: values are averaged over every two-card
   composition of the total, weighted by its probability, and the legal
   action of highest value is the best strategy (pairs are their own rows).
   Hands of three or more cards, and split hands, are evaluated for their
   total against the shoe less the up card (:class:`HandEvaluator`). A split
   hand dealt another pair card, when the caller says a split is legal
   (``split.max_hands``, ``split.resplit_aces``), values the resplit as a first
   split is valued: two hands, not split again.

Rules that enter the computation: decks, S17/H17; hole card and peek (a
peeked dealer blackjack ends the round before any decision, so decisions are
taken conditional on "no dealer blackjack"; without a peek the blackjack risk
is charged to each decision with what it costs: the whole stake, or only the
original stake when ``eu_ten_up_returns_extra_stakes`` applies to a ten up);
doubling totals, double after split, split, split aces one card, late and
early surrender, N-card Charlie, insurance pay.

An infinite-deck model is not enough: it hits A,2 v 5 and A,4 v 4 where the
8-deck chart doubles. :func:`chart` prints the decisions in the GAME-FACTS
layout (D = double else hit, Ds = double else stand, P = split); the tests
compare it to the published 8-deck S17 DAS chart, cell by cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from studio.cards import Card
from studio.rules.ruleset import HoleCard, Peek, RuleSet, Surrender


class Action(StrEnum):
    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"


VALUES = tuple(range(1, 11))  # 1 = ace, 10 = any ten-value card
DEALER_UPS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
Counts = tuple[int, ...]  # cards left per value, index 0 = aces .. index 9 = ten-values


@dataclass(frozen=True, slots=True)
class StrategyParams:
    """The part of a rule set that the strategy depends on (the cache key)."""

    decks: int
    hits_soft_17: bool
    peek_ace: bool
    peek_ten: bool
    double_allowed: bool
    double_totals: tuple[int, ...] | None
    double_after_split: bool
    split_allowed: bool
    split_aces_one_card: bool
    surrender: Surrender
    charlie: int | None
    ten_up_returns_extra: bool
    auto_stand_21: bool
    insurance_pays: float

    @classmethod
    def of(cls, rules: RuleSet) -> StrategyParams:
        us = rules.dealer.hole_card is HoleCard.US
        return cls(
            decks=rules.shoe.decks,
            hits_soft_17=rules.dealer.hits_soft_17,
            peek_ace=us and rules.dealer.peek in (Peek.ACE, Peek.ACE_AND_TEN),
            peek_ten=us and rules.dealer.peek is Peek.ACE_AND_TEN,
            double_allowed=rules.double.allowed,
            double_totals=tuple(rules.double.totals) if rules.double.totals is not None else None,
            double_after_split=rules.double.after_split,
            split_allowed=rules.split.allowed,
            split_aces_one_card=rules.split.aces_one_card,
            surrender=rules.surrender,
            charlie=rules.charlie_cards,
            ten_up_returns_extra=rules.eu_ten_up_returns_extra_stakes,
            auto_stand_21=rules.auto_stand_21,
            insurance_pays=float(rules.insurance.pays),
        )


def _total(hard: int, ace: bool) -> tuple[int, bool]:
    if ace and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def full_shoe(decks: int) -> Counts:
    return tuple(16 * decks if v == 10 else 4 * decks for v in VALUES)


def remove(counts: Counts, *values: int) -> Counts:
    out = list(counts)
    for v in values:
        out[v - 1] -= 1
        if out[v - 1] < 0:
            raise ValueError(f"no card of value {v} left in the shoe")
    return tuple(out)


@lru_cache(maxsize=4096)
def _dealer_distribution(counts: Counts, up: int, h17: bool) -> dict[int, float]:
    """Final dealer totals (22 = bust) drawing without replacement from ``counts``,
    conditional on no dealer blackjack."""
    out: dict[int, float] = {}
    memo: dict[tuple[Counts, int, bool], dict[int, float]] = {}

    def walk(counts: Counts, hard: int, ace: bool) -> dict[int, float]:
        value, soft = _total(hard, ace)
        if value > 21:
            return {22: 1.0}
        if value > 17 or (value == 17 and not (soft and h17)):
            return {value: 1.0}
        key = (counts, hard, ace)
        hit = memo.get(key)
        if hit is not None:
            return hit
        left = sum(counts)
        res: dict[int, float] = {}
        for v in VALUES:
            n = counts[v - 1]
            if n == 0:
                continue
            sub = walk(remove(counts, v), hard + v, ace or v == 1)
            w = n / left
            for k, pr in sub.items():
                res[k] = res.get(k, 0.0) + w * pr
        memo[key] = res
        return res

    bj_card = {1: 10, 10: 1}.get(up)
    left = sum(counts) - (counts[bj_card - 1] if bj_card else 0)
    for v in VALUES:
        n = counts[v - 1]
        if v == bj_card or n == 0:
            continue
        sub = walk(remove(counts, v), up + v, up == 1 or v == 1)
        for k, pr in sub.items():
            out[k] = out.get(k, 0.0) + n / left * pr
    return out


class HandEvaluator:
    """Expected values against one dealer up card, for one shoe composition.

    ``counts`` is the shoe with the dealer's up card (and, for a two-card
    decision, the player's two cards) removed. The dealer draws from it
    without replacement (exact); the player's draws use its proportions.
    Values are per original unit and conditional on no dealer blackjack;
    :meth:`with_risk` adds the blackjack risk of an unpeeked dealer.
    """

    def __init__(self, params: StrategyParams, counts: Counts, up: int) -> None:
        self.params = params
        self.up = up
        self.counts = counts
        left = sum(counts)
        self.p = {v: counts[v - 1] / left for v in VALUES}
        self.bj_card = {1: 10, 10: 1}.get(up)
        peeked = (up == 1 and params.peek_ace) or (up == 10 and params.peek_ten)
        self.risk = 0.0 if (self.bj_card is None or peeked) else self.p[self.bj_card]
        self.dealer = _dealer_distribution(counts, up, params.hits_soft_17)
        self._hs: dict[tuple[int, bool, int], float] = {}
        self._split: dict[int, float] = {}  # a resplit is asked once per split hand's pair

    # --- dealer ---------------------------------------------------------------

    # --- player values conditional on no dealer blackjack ---------------------

    def finished(self, hard: int, ace: bool, cards: int) -> bool:
        value, _ = _total(hard, ace)
        if value > 21:
            return True
        charlie = self.params.charlie
        if charlie is not None and cards >= charlie:
            return True
        return value == 21 and self.params.auto_stand_21

    def stand_value(self, hard: int, ace: bool, cards: int) -> float:
        value, _ = _total(hard, ace)
        if value > 21:
            return -1.0
        charlie = self.params.charlie
        if charlie is not None and cards >= charlie:
            return 1.0
        ev = 0.0
        for dealer, prob in self.dealer.items():
            if dealer == 22 or dealer < value:
                ev += prob
            elif dealer > value:
                ev -= prob
        return ev

    def hit_stand_value(self, hard: int, ace: bool, cards: int) -> float:
        key = (hard, ace, cards)
        cached = self._hs.get(key)
        if cached is not None:
            return cached
        stand = self.stand_value(hard, ace, cards)
        best = stand if self.finished(hard, ace, cards) else max(stand, self.hit_value(*key))
        self._hs[key] = best
        return best

    def hit_value(self, hard: int, ace: bool, cards: int) -> float:
        ev = 0.0
        for v in VALUES:
            if hard + v > 21:
                ev -= self.p[v]
            else:
                ev += self.p[v] * self.hit_stand_value(hard + v, ace or v == 1, cards + 1)
        return ev

    def double_value(self, hard: int, ace: bool, cards: int) -> float:
        ev = 0.0
        for v in VALUES:
            ev += self.p[v] * self.stand_value(hard + v, ace or v == 1, cards + 1)
        return 2.0 * ev

    def may_double(self, hard: int, ace: bool, after_split: bool) -> bool:
        p = self.params
        if not p.double_allowed or (after_split and not p.double_after_split):
            return False
        if p.double_totals is None:
            return True
        return _total(hard, ace)[0] in p.double_totals

    # --- blackjack risk ---------------------------------------------------------

    def with_risk(self, cond: float, loss: float) -> float:
        return (1.0 - self.risk) * cond - self.risk * loss

    def double_loss(self, base: float) -> float:
        returned = self.params.ten_up_returns_extra and self.up == 10
        return base + (0.0 if returned else 1.0)

    def _split_hand_value(self, pair: int, base_loss: float) -> float:
        ev = 0.0
        for v in VALUES:
            hard, ace = pair + v, pair == 1 or v == 1
            if pair == 1 and self.params.split_aces_one_card:
                ev += self.p[v] * self.with_risk(self.stand_value(hard, ace, 2), base_loss)
                continue
            best = self.with_risk(self.hit_stand_value(hard, ace, 2), base_loss)
            if self.may_double(hard, ace, after_split=True) and not self.finished(hard, ace, 2):
                doubled = self.with_risk(
                    self.double_value(hard, ace, 2), self.double_loss(base_loss)
                )
                best = max(best, doubled)
            ev += self.p[v] * best
        return ev

    def split_value(self, pair: int) -> float:
        cached = self._split.get(pair)
        if cached is not None:
            return cached
        second_loss = 0.0 if (self.params.ten_up_returns_extra and self.up == 10) else 1.0
        value = self._split_hand_value(pair, 1.0) + self._split_hand_value(pair, second_loss)
        self._split[pair] = value
        return value

    def action_values(
        self, hard: int, ace: bool, cards: int, legal: Sequence[Action], pair: int | None
    ) -> dict[Action, float]:
        """Expected value (per original unit, blackjack risk included) of each legal action."""
        out: dict[Action, float] = {}
        for action in legal:
            if action is Action.STAND:
                out[action] = self.with_risk(self.stand_value(hard, ace, cards), 1.0)
            elif action is Action.HIT:
                out[action] = self.with_risk(self.hit_value(hard, ace, cards), 1.0)
            elif action is Action.DOUBLE:
                out[action] = self.with_risk(
                    self.double_value(hard, ace, cards), self.double_loss(1.0)
                )
            elif action is Action.SPLIT and pair is not None:
                out[action] = self.split_value(pair)
            elif action is Action.SURRENDER:
                out[action] = -0.5
        return out


Hand = tuple[int, ...]  # cards per value, like Counts

_OUTCOMES = (17, 18, 19, 20, 21, 22)


def _add(t: Hand, value: int) -> Hand:
    out = list(t)
    out[value - 1] += 1
    return tuple(out)


def _stand_ev(dist: Sequence[float], value: int) -> float:
    """Standing on ``value`` against a dealer distribution over 17..21 and bust."""
    ev = dist[5]
    for k in range(5):
        if 17 + k < value:
            ev += dist[k]
        elif 17 + k > value:
            ev -= dist[k]
    return ev


def hand_of(*values: int) -> Hand:
    out = [0] * 10
    for v in values:
        out[v - 1] += 1
    return tuple(out)


class CompositionEvaluator:
    """Two-card decisions against one up card, with the shoe's composition.

    The player's draws come from the shoe less the up card and every card the
    player holds (exact). The dealer's final-total distribution is exact for
    the shoe less the up card, and shifted by each card the player holds by
    that card's exact effect of removal (a linear correction, very accurate
    for 6-8 decks). Values are per original unit, with the blackjack risk of
    an unpeeked dealer added as in :class:`HandEvaluator`.

    A state is ``(removed, hard, ace, cards)``: the cards out of the shoe (the
    player's hand, plus the other split card after a split) and the hand's
    own hard sum, ace flag and card count.
    """

    def __init__(self, params: StrategyParams, up: int) -> None:
        self.params = params
        self.up = up
        self.shoe = remove(full_shoe(params.decks), up)
        self.shoe_size = sum(self.shoe)
        base = HandEvaluator(params, self.shoe, up)
        self.base = base
        self.d0 = [base.dealer.get(k, 0.0) for k in _OUTCOMES]
        self.delta: list[list[float]] = []
        for v in VALUES:
            if self.shoe[v - 1] == 0:
                self.delta.append([0.0] * 6)
                continue
            d = HandEvaluator(params, remove(self.shoe, v), up).dealer
            self.delta.append([d.get(k, 0.0) - x for k, x in zip(_OUTCOMES, self.d0, strict=True)])
        self._hs: dict[tuple[Hand, int, bool, int], float] = {}
        # standing on ``value`` is linear in the removed cards: ev0 + sum(n_i * slope_i)
        self._ev0 = [_stand_ev(self.d0, value) for value in range(22)]
        self._ev_slope = [[_stand_ev(dv, value) for dv in self.delta] for value in range(22)]

    def probabilities(self, removed: Hand) -> list[float]:
        total = self.shoe_size - sum(removed)
        return [(n - r) / total for n, r in zip(self.shoe, removed, strict=True)]

    def risk(self, removed: Hand) -> float:
        if self.base.risk == 0.0 or self.base.bj_card is None:
            return 0.0
        return self.probabilities(removed)[self.base.bj_card - 1]

    def stand(self, removed: Hand, hard: int, ace: bool, cards: int) -> float:
        value = hard + 10 if ace and hard <= 11 else hard
        if value > 21:
            return -1.0
        charlie = self.params.charlie
        if charlie is not None and cards >= charlie:
            return 1.0
        ev = self._ev0[value]
        slopes = self._ev_slope[value]
        for i, n in enumerate(removed):
            if n:
                ev += n * slopes[i]
        return ev

    def finished(self, hard: int, ace: bool, cards: int) -> bool:
        return self.base.finished(hard, ace, cards)

    def hit_stand(self, removed: Hand, hard: int, ace: bool, cards: int) -> float:
        key = (removed, hard, ace, cards)
        cached = self._hs.get(key)
        if cached is not None:
            return cached
        best = self.stand(removed, hard, ace, cards)
        if not self.finished(hard, ace, cards):
            best = max(best, self.hit(removed, hard, ace, cards))
        self._hs[key] = best
        return best

    def hit(self, removed: Hand, hard: int, ace: bool, cards: int) -> float:
        ev = 0.0
        for v, p in enumerate(self.probabilities(removed), start=1):
            if not p:
                continue
            if hard + v > 21:
                ev -= p
            else:
                ev += p * self.hit_stand(_add(removed, v), hard + v, ace or v == 1, cards + 1)
        return ev

    def double(self, removed: Hand, hard: int, ace: bool, cards: int) -> float:
        ev = 0.0
        for v, p in enumerate(self.probabilities(removed), start=1):
            if p:
                ev += p * self.stand(_add(removed, v), hard + v, ace or v == 1, cards + 1)
        return 2.0 * ev

    def _with_risk(self, cond: float, loss: float, removed: Hand) -> float:
        risk = self.risk(removed)
        return (1.0 - risk) * cond - risk * loss

    def _split_hand(self, pair: int, removed: Hand, base_loss: float) -> float:
        ev = 0.0
        for v, p in enumerate(self.probabilities(removed), start=1):
            if not p:
                continue
            rem = _add(removed, v)
            hard, ace = pair + v, pair == 1 or v == 1
            if pair == 1 and self.params.split_aces_one_card:
                ev += p * self._with_risk(self.stand(rem, hard, ace, 2), base_loss, removed)
                continue
            best = self._with_risk(self.hit_stand(rem, hard, ace, 2), base_loss, removed)
            if self.base.may_double(hard, ace, after_split=True) and not self.finished(
                hard, ace, 2
            ):
                loss = self.base.double_loss(base_loss)
                best = max(best, self._with_risk(self.double(rem, hard, ace, 2), loss, removed))
            ev += p * best
        return ev

    def split(self, pair: int) -> float:
        removed = hand_of(pair, pair)
        second_loss = 0.0 if (self.params.ten_up_returns_extra and self.up == 10) else 1.0
        return self._split_hand(pair, removed, 1.0) + self._split_hand(pair, removed, second_loss)

    def action_values(
        self, hand: Hand, legal: Sequence[Action], split_pair: int | None
    ) -> dict[Action, float]:
        hard = sum((i + 1) * n for i, n in enumerate(hand))
        ace, cards = hand[0] > 0, sum(hand)
        out: dict[Action, float] = {}
        for action in legal:
            if action is Action.STAND:
                out[action] = self._with_risk(self.stand(hand, hard, ace, cards), 1.0, hand)
            elif action is Action.HIT:
                out[action] = self._with_risk(self.hit(hand, hard, ace, cards), 1.0, hand)
            elif action is Action.DOUBLE:
                loss = self.base.double_loss(1.0)
                out[action] = self._with_risk(self.double(hand, hard, ace, cards), loss, hand)
            elif action is Action.SPLIT and split_pair is not None:
                out[action] = self.split(split_pair)
            elif action is Action.SURRENDER:
                out[action] = -0.5
        return out


_ORDER = (Action.STAND, Action.HIT, Action.DOUBLE, Action.SPLIT, Action.SURRENDER)


def _argmax(values: dict[Action, float]) -> Action:
    if not values:
        raise ValueError("no legal action to choose from")
    return max(values, key=lambda a: (values[a], -_ORDER.index(a)))


class BasicStrategy:
    """Total-dependent basic strategy for one set of rules.

    A two-card decision is taken for the *total*: the expected values of each
    action are averaged over every two-card composition giving that total
    (weighted by its probability in the shoe without the up card), each
    evaluated by :class:`CompositionEvaluator`. Pairs are their own rows.
    Hands of three or more cards and split hands use :class:`HandEvaluator`
    (the shoe less the up card); a split hand's pair is split again when SPLIT
    is legal and worth more. That decision does not depend on how many hands
    the split already made (the certification math relies on it).
    """

    def __init__(self, params: StrategyParams) -> None:
        self.params = params
        self.shoe = full_shoe(params.decks)
        self._evaluators: dict[tuple[Counts, int], HandEvaluator] = {}
        self._composition: dict[int, CompositionEvaluator] = {}
        self._two_card: dict[
            tuple[int, bool, int, tuple[Action, ...], bool], dict[Action, float]
        ] = {}

    def evaluator(self, up: int, *player: int) -> HandEvaluator:
        counts = remove(self.shoe, up, *player)
        key = (counts, up)
        ev = self._evaluators.get(key)
        if ev is None:
            ev = HandEvaluator(self.params, counts, up)
            self._evaluators[key] = ev
        return ev

    def composition(self, up: int) -> CompositionEvaluator:
        ev = self._composition.get(up)
        if ev is None:
            ev = CompositionEvaluator(self.params, up)
            self._composition[up] = ev
        return ev

    def _compositions(
        self, hard: int, ace: bool, pair: bool, up: int
    ) -> list[tuple[float, int, int]]:
        counts = remove(self.shoe, up)
        out: list[tuple[float, int, int]] = []
        for a in VALUES:
            for b in VALUES:
                if b < a or a + b != hard or ((a == 1 or b == 1) != ace) or ((a == b) != pair):
                    continue
                na = counts[a - 1]
                nb = counts[b - 1] - (1 if a == b else 0)
                weight = float(na * nb) * (1.0 if a == b else 2.0)
                if weight > 0:
                    out.append((weight, a, b))
        return out

    def two_card_values(
        self, hard: int, ace: bool, up: int, legal: Sequence[Action], pair: bool
    ) -> dict[Action, float]:
        key = (hard, ace, up, tuple(legal), pair)
        cached = self._two_card.get(key)
        if cached is not None:
            return cached
        comps = self._compositions(hard, ace, pair, up)
        if not comps:  # e.g. a soft 12 that is not A,A: fall back to the up card only
            values = self.evaluator(up).action_values(hard, ace, 2, legal, None)
        else:
            total_w = sum(w for w, _, _ in comps)
            values = {}
            for w, a, b in comps:
                part = self.composition(up).action_values(hand_of(a, b), legal, a if pair else None)
                for action, value in part.items():
                    values[action] = values.get(action, 0.0) + w / total_w * value
        self._two_card[key] = values
        return values

    def action_values(
        self,
        hard: int,
        ace: bool,
        cards: int,
        up: int,
        legal: Sequence[Action],
        pair: bool = False,
        after_split: bool = False,
    ) -> dict[Action, float]:
        if cards == 2 and not after_split:
            return self.two_card_values(hard, ace, up, legal, pair)
        # A split hand dealt another pair card may be split again when the caller
        # says SPLIT is legal (max_hands, resplit_aces): value it like a first split.
        split_pair = hard // 2 if pair and cards == 2 else None
        return self.evaluator(up).action_values(hard, ace, cards, legal, split_pair)

    def best(
        self,
        hard: int,
        ace: bool,
        cards: int,
        up: int,
        legal: Sequence[Action],
        pair: bool = False,
        after_split: bool = False,
    ) -> Action:
        return _argmax(self.action_values(hard, ace, cards, up, legal, pair, after_split))

    def early_surrender(self, hard: int, ace: bool, up: int, pair: bool) -> bool:
        """Early surrender against an ace, decided before the peek."""
        if up != 1:
            return False
        ev = self.evaluator(up)
        legal = [Action.STAND, Action.HIT]
        if ev.may_double(hard, ace, after_split=False):
            legal.append(Action.DOUBLE)
        if pair and self.params.split_allowed:
            legal.append(Action.SPLIT)
        play_on = max(self.two_card_values(hard, ace, up, legal, pair).values())
        if ev.risk == 0.0:  # values are conditional on a peek that has not happened yet
            risk = ev.p[10]
            play_on = (1.0 - risk) * play_on - risk
        return play_on < -0.5

    def take_insurance(self, up: int) -> bool:
        """Insurance is worth it only if pays x P(ten in the hole) beats P(no ten)."""
        p_ten = self.evaluator(up).p[10]
        return up == 1 and self.params.insurance_pays * p_ten > 1.0 - p_ten


@lru_cache(maxsize=32)
def _strategy_for(params: StrategyParams) -> BasicStrategy:
    return BasicStrategy(params)


def strategy_for(rules: RuleSet) -> BasicStrategy:
    """The (cached) basic strategy of a rule set."""
    return _strategy_for(StrategyParams.of(rules))


def card_state(cards: Sequence[Card]) -> tuple[int, bool, int]:
    """(hard sum with aces as 1, ace present, number of cards)."""
    return sum(c.value for c in cards), any(c.is_ace for c in cards), len(cards)


def best_action(
    rules: RuleSet,
    cards: Sequence[Card],
    dealer_up: Card,
    legal: Sequence[Action],
    after_split: bool = False,
) -> Action:
    """Best strategy for a hand among ``legal`` actions."""
    hard, ace, n = card_state(cards)
    pair = n == 2 and cards[0].value == cards[1].value
    return strategy_for(rules).best(hard, ace, n, dealer_up.value, legal, pair, after_split)


# --- chart in the GAME-FACTS layout -------------------------------------------


def _code(strategy: BasicStrategy, hard: int, ace: bool, up: int, pair: bool) -> str:
    legal = [Action.STAND, Action.HIT]
    if strategy.evaluator(up).may_double(hard, ace, after_split=False):
        legal.append(Action.DOUBLE)
    if pair and strategy.params.split_allowed:
        legal.append(Action.SPLIT)
    values = strategy.two_card_values(hard, ace, up, legal, pair)
    best = _argmax(values)
    if best is Action.SPLIT:
        return "P"
    if best is Action.DOUBLE:
        return "D" if values[Action.HIT] >= values[Action.STAND] else "Ds"
    return "H" if best is Action.HIT else "S"


def chart(rules: RuleSet) -> dict[str, list[str]]:
    """Two-card decisions per row (``hard 12``, ``soft A,7``, ``pair 8,8``) vs 2..9, T, A."""
    strategy = strategy_for(rules)
    rows: dict[str, list[str]] = {}
    for value in range(5, 20):
        rows[f"hard {value}"] = [_code(strategy, value, False, up, False) for up in DEALER_UPS]
    for other in range(2, 10):
        rows[f"soft A,{other}"] = [_code(strategy, 1 + other, True, up, False) for up in DEALER_UPS]
    for pair in range(1, 11):
        label = "A" if pair == 1 else ("T" if pair == 10 else str(pair))
        rows[f"pair {label},{label}"] = [
            _code(strategy, 2 * pair, pair == 1, up, True) for up in DEALER_UPS
        ]
    return rows
