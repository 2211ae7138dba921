"""Exact expected return of the main game by combinatorial analysis of a full shoe.

Method (see docs/certification.md for the long version)
-------------------------------------------------------
* Cards are value classes (:mod:`studio.certification.dealer`). For every up
  card ``u`` and every two-card player hand ``{a, b}`` the three cards are
  removed from the shoe and the hand is analysed exactly; the results are
  weighted by the exact probability of that initial deal.
* A player hand is the multiset of its cards. Its value depends only on that
  multiset and on the cards otherwise known to be out of the shoe (the up card
  and, for a split hand, the other pair card), so values are memoised by
  ``(hand, extra card)``.
* The dealer's outcome probabilities for every composition the player can leave
  behind are computed exactly (without replacement) in one vectorised pass per
  up card (:func:`studio.certification.dealer.outcome_matrix`).
* Peek games are handled without approximating the hole card: every value is
  ``E[payoff * 1{no dealer blackjack}]``. Draw probabilities are then the plain
  ones of the remaining shoe, the dealer's natural is an outcome of the dealer
  recursion that simply pays nothing at the nodes, and the dealer blackjack is
  settled once at the top of the tree (``-P(BJ)``, or a push for a player
  blackjack). Comparing two actions at a node by these unnormalised values is
  the same as comparing their conditional expectations.
* No-hole-card (EU) games and up cards the dealer does not peek under keep the
  natural at the nodes: a standing hand loses its whole stake against it, or
  only the original stake when ``eu_ten_up_returns_extra_stakes`` applies with a
  ten up. A bust loses at once, whatever the dealer then holds.
* Splits (one split, two hands): by exchangeability the two hands have the
  same expected value when each is played on its own cards with both pair cards
  and the up card known to be out, so the split is worth twice one hand whose
  first card is the pair card and whose shoe lacks the other pair card. This is
  exact for that post-split strategy (each hand plays optimally on its own
  cards); it is not an infinite-deck approximation.

Strategies: ``optimal`` chooses the best action at every node from the exact
composition (composition-dependent play); a :class:`Policy` (the engine's
total-dependent basic strategy) is evaluated exactly on the same tree.
Arithmetic is float64: results are accurate to about 1e-12.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Literal, Protocol

import numpy as np

from studio.certification.dealer import (
    ACE,
    N_CLASSES,
    TEN,
    Composition,
    hand_total,
    outcome_matrix,
    shoe_composition,
)
from studio.errors import RuleError


class Action(StrEnum):
    STAND = "stand"
    HIT = "hit"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"


SurrenderRule = Literal["none", "late", "early"]


@dataclass(frozen=True, slots=True)
class GameRules:
    """The numbers of a rule set that the main-game analysis needs.

    This is a *view* derived from :class:`studio.rules.ruleset.RuleSet` by
    :func:`studio.certification.rulesets.game_rules`, never an independent
    rule model.
    """

    decks: int
    hits_soft_17: bool = False
    peek_ace: bool = True
    peek_ten: bool = True
    blackjack_pays: float = 1.5
    double_allowed: bool = True
    double_totals: frozenset[int] | None = None
    double_after_split: bool = False
    split_allowed: bool = True
    split_max_hands: int = 2
    split_by_rank: bool = False
    split_aces_one_card: bool = True
    surrender: SurrenderRule = "none"
    charlie_cards: int | None = None
    ten_up_returns_extra_stakes: bool = False
    auto_stand_21: bool = True

    def __post_init__(self) -> None:
        if self.split_allowed and self.split_max_hands != 2:
            raise RuleError(
                f"main-game analysis supports one split (two hands); "
                f"split.max_hands={self.split_max_hands} is not supported yet"
            )
        if self.charlie_cards is not None and self.charlie_cards < 3:
            raise RuleError("charlie_cards must be at least 3")


@dataclass(frozen=True, slots=True)
class HandView:
    """What a total-dependent strategy sees when asked for a decision."""

    total: int
    soft: bool
    has_ace: bool
    n_cards: int
    pair: int | None  # value class of a splittable pair, else None
    upcard: int
    can_double: bool
    can_split: bool
    can_surrender: bool  # late surrender (early surrender is asked separately)
    after_split: bool

    @property
    def hard(self) -> int:
        """Total with every ace counted as one."""
        return self.total - 10 if self.soft else self.total


class Policy(Protocol):
    """A strategy that the analysis evaluates exactly (e.g. the engine's basic strategy)."""

    def decide(self, view: HandView) -> Action:
        """The action for a live hand; only legal actions may be answered."""
        ...

    def early_surrender(self, view: HandView) -> bool:
        """Whether to surrender early against an ace (asked before the peek)."""
        ...


@dataclass(frozen=True, slots=True)
class MainGameResult:
    strategy: str
    decks: int
    expected_value: float
    by_upcard: tuple[float, ...]
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def rtp(self) -> float:
        return 1.0 + self.expected_value

    @property
    def house_edge(self) -> float:
        return -self.expected_value


@cache
def _total(hand: Composition) -> tuple[int, bool]:
    return hand_total(hand)


@cache
def _add(h: Composition, cls: int) -> Composition:
    lst = list(h)
    lst[cls] += 1
    return tuple(lst)


class _UpcardAnalysis:
    """Every player hand against one up card, on one shoe."""

    def __init__(self, rules: GameRules, shoe: Composition, upcard: int) -> None:
        self.rules = rules
        self.upcard = upcard
        base = list(shoe)
        base[upcard] -= 1
        self.base: Composition = tuple(base)
        self.peeked = (upcard == ACE and rules.peek_ace) or (upcard == TEN and rules.peek_ten)
        self.natural_possible = upcard in (ACE, TEN)
        self.obo = rules.ten_up_returns_extra_stakes and upcard == TEN and not self.peeked
        self._rows: dict[Composition, list[float]] = {}
        self._rest: dict[tuple[Composition, int], Composition] = {}
        self._hs: dict[tuple[Composition, int], float] = {}
        self._pol: dict[tuple[Composition, int], float] = {}
        self._build_dealer_table()

    # --- compositions ------------------------------------------------------------------------

    def remaining(self, hand: Composition, extra: int) -> Composition:
        key = (hand, extra)
        got = self._rest.get(key)
        if got is None:
            rest = [b - h for b, h in zip(self.base, hand, strict=True)]
            if extra >= 0:
                rest[extra] -= 1
            got = tuple(rest)
            self._rest[key] = got
        return got

    def can_hit(self, hand: Composition, extra: int) -> bool:
        total, _ = _total(hand)
        if total >= 21:
            return False
        n = sum(hand)
        if extra == ACE and self.rules.split_aces_one_card and hand[ACE] >= 1 and n >= 2:
            return False
        return not (self.rules.charlie_cards is not None and n >= self.rules.charlie_cards)

    def _build_dealer_table(self) -> None:
        needed: set[tuple[Composition, int]] = set()
        seen: set[tuple[Composition, int]] = set()
        stack: list[tuple[Composition, int]] = []
        zero: Composition = (0,) * N_CLASSES
        for a in range(N_CLASSES):
            for b in range(a, N_CLASSES):
                stack.append((_add(_add(zero, a), b), -1))
            for c in range(N_CLASSES):
                stack.append((_add(_add(zero, a), c), a))
        while stack:
            hand, extra = stack.pop()
            if (hand, extra) in seen:
                continue
            seen.add((hand, extra))
            rest = self.remaining(hand, extra)
            if min(rest) < 0:
                continue
            total, _ = _total(hand)
            if total > 21:
                continue
            needed.add((hand, extra))
            if self.can_hit(hand, extra) or self.can_double(hand, extra):
                for c in range(N_CLASSES):
                    if rest[c] > 0:
                        child = _add(hand, c)
                        nxt = (child, extra)
                        if nxt not in seen and _total(child)[0] <= 21:
                            if nxt not in self._rest:
                                self._rest[nxt] = (*rest[:c], rest[c] - 1, *rest[c + 1 :])
                            stack.append(nxt)
        keys = sorted({self.remaining(h, e) for h, e in needed})
        if not keys:
            return
        matrix = outcome_matrix(
            np.array(keys, dtype=np.int64), self.upcard, self.rules.hits_soft_17
        )
        for key, row in zip(keys, matrix.tolist(), strict=True):
            self._rows[key] = row

    # --- terminal values (stake s, unnormalised in peek games) ---------------------------------

    def natural_prob(self, rest: Sequence[int]) -> float:
        n = sum(rest)
        if self.upcard == ACE:
            return rest[TEN] / n
        if self.upcard == TEN:
            return rest[ACE] / n
        return 0.0

    def natural_loss(self, stake: float, split: bool) -> float:
        """Result of a standing hand when an unpeeked dealer natural shows up."""
        if self.peeked or not self.natural_possible:
            return 0.0
        if self.obo:
            return -0.5 if split else -1.0
        return -stake

    def bust_value(self, rest: Sequence[int], stake: float) -> float:
        if self.peeked:
            return -stake * (1.0 - self.natural_prob(rest))
        return -stake

    def charlie_value(self, rest: Sequence[int], stake: float, split: bool) -> float:
        b = self.natural_prob(rest)
        return stake * (1.0 - b) + b * self.natural_loss(stake, split)

    def stand_value(self, hand: Composition, extra: int, stake: float) -> float:
        rest = self.remaining(hand, extra)
        total, _ = _total(hand)
        if total > 21:
            return self.bust_value(rest, stake)
        row = self._rows[tuple(rest)]
        if total < 17:
            e1 = row[5] - (row[0] + row[1] + row[2] + row[3] + row[4])
        else:
            i = total - 17
            e1 = row[5] + sum(row[:i]) - sum(row[i + 1 : 5])
        return stake * e1 + row[6] * self.natural_loss(stake, extra >= 0)

    def _after_card(
        self, hand: Composition, extra: int, stake: float, then: Callable[[Composition], float]
    ) -> float:
        """Expected value over the next card; ``then`` values a live (non-bust) hand."""
        rest = self.remaining(hand, extra)
        n = sum(rest)
        out = 0.0
        charlie = self.rules.charlie_cards
        for c in range(N_CLASSES):
            if rest[c] <= 0:
                continue
            new = _add(hand, c)
            total, _ = _total(new)
            if total > 21:
                new_rest = list(rest)
                new_rest[c] -= 1
                v = self.bust_value(new_rest, stake)
            elif charlie is not None and sum(new) >= charlie:
                v = self.charlie_value(self.remaining(new, extra), stake, extra >= 0)
            else:
                v = then(new)
            out += rest[c] / n * v
        return out

    def double_value(self, hand: Composition, extra: int) -> float:
        return self._after_card(hand, extra, 2.0, lambda h: self.stand_value(h, extra, 2.0))

    def can_double(self, hand: Composition, extra: int) -> bool:
        r = self.rules
        if not r.double_allowed or sum(hand) != 2:
            return False
        if extra >= 0:
            if not r.double_after_split:
                return False
            if extra == ACE and r.split_aces_one_card:
                return False
        if r.double_totals is not None:
            total, _ = _total(hand)
            if total not in r.double_totals:
                return False
        return True

    # --- optimal (composition-dependent) play --------------------------------------------------

    def hit_stand(self, hand: Composition, extra: int) -> float:
        """Best of stand and hit (hit again later optimally), stake 1."""
        key = (hand, extra)
        got = self._hs.get(key)
        if got is not None:
            return got
        best = self.stand_value(hand, extra, 1.0)
        if self.can_hit(hand, extra):
            best = max(best, self._after_card(hand, extra, 1.0, lambda h: self.hit_stand(h, extra)))
        self._hs[key] = best
        return best

    def hand_options(self, hand: Composition, extra: int) -> dict[Action, float]:
        """Values of every legal first action on a two-card hand (no split here)."""
        opts = {Action.STAND: self.stand_value(hand, extra, 1.0)}
        if self.can_hit(hand, extra):
            opts[Action.HIT] = self._after_card(
                hand, extra, 1.0, lambda h: self.hit_stand(h, extra)
            )
        if self.can_double(hand, extra):
            opts[Action.DOUBLE] = self.double_value(hand, extra)
        return opts

    def split_hand_value(self, pair: int, decide: Callable[[Composition, int], float]) -> float:
        """Expected value of both hands of a split of ``pair`` (stake 1 each)."""
        start = _add((0,) * N_CLASSES, pair)
        return 2.0 * self._after_card(start, pair, 1.0, lambda h: decide(h, pair))

    def optimal_split_first(self, hand: Composition, extra: int) -> float:
        return max(self.hand_options(hand, extra).values())

    # --- policy (total-dependent) play ---------------------------------------------------------

    def policy_value(self, hand: Composition, extra: int, policy: Policy) -> float:
        """Value of a live hand of >= 2 cards played by ``policy`` (no split/surrender now)."""
        key = (hand, extra)
        got = self._pol.get(key)
        if got is not None:
            return got
        total, soft = _total(hand)
        can_hit = self.can_hit(hand, extra)
        can_double = self.can_double(hand, extra)
        view = HandView(
            total=total,
            soft=soft,
            has_ace=hand[ACE] > 0,
            n_cards=sum(hand),
            pair=None,
            upcard=self.upcard,
            can_double=can_double,
            can_split=False,
            can_surrender=False,
            after_split=extra >= 0,
        )
        action = policy.decide(view) if can_hit else Action.STAND
        value = self._apply(hand, extra, action, policy, can_double)
        self._pol[key] = value
        return value

    def _apply(
        self, hand: Composition, extra: int, action: Action, policy: Policy, can_double: bool
    ) -> float:
        if action is Action.DOUBLE and can_double:
            return self.double_value(hand, extra)
        if action in (Action.HIT, Action.DOUBLE):
            return self._after_card(hand, extra, 1.0, lambda h: self.policy_value(h, extra, policy))
        if action is Action.STAND:
            return self.stand_value(hand, extra, 1.0)
        raise RuleError(f"strategy answered {action!r} where it is not allowed")

    # --- the initial hand --------------------------------------------------------------------

    def can_split(self, a: int, b: int) -> bool:
        r = self.rules
        if not r.split_allowed or a != b:
            return False
        # By rank, a ten-valued pair is splittable only for identical ranks; splitting
        # tens is never chosen by either strategy, so the value class is not split then.
        return not (r.split_by_rank and a == TEN)

    def initial_value(self, a: int, b: int, policy: Policy | None) -> tuple[float, Action]:
        hand = _add(_add((0,) * N_CLASSES, a), b)
        rest = self.remaining(hand, -1)
        nat = self.natural_prob(rest)
        if {a, b} == {ACE, TEN}:
            return self.rules.blackjack_pays * (1.0 - nat), Action.STAND
        top = -nat if self.peeked else 0.0  # settled dealer natural in peek games
        surrender_late = self.rules.surrender == "late"
        if policy is None:
            opts = self.hand_options(hand, -1)
            if self.can_split(a, b):
                opts[Action.SPLIT] = self.split_hand_value(a, self.optimal_split_first)
            if surrender_late:
                opts[Action.SURRENDER] = -0.5 * (1.0 - nat) if self.peeked else -0.5
            action = max(opts, key=lambda k: opts[k])
            value = top + opts[action]
        else:
            total, soft = _total(hand)
            can_split = self.can_split(a, b)
            can_double = self.can_double(hand, -1)
            view = HandView(
                total=total,
                soft=soft,
                has_ace=hand[ACE] > 0,
                n_cards=2,
                pair=a if can_split else None,
                upcard=self.upcard,
                can_double=can_double,
                can_split=can_split,
                can_surrender=surrender_late,
                after_split=False,
            )
            if (
                self.rules.surrender == "early"
                and self.upcard == ACE
                and policy.early_surrender(view)
            ):
                return -0.5, Action.SURRENDER
            action = policy.decide(view) if self.can_hit(hand, -1) else Action.STAND
            if action is Action.SPLIT and can_split:
                value = top + self.split_hand_value(a, lambda h, e: self.policy_value(h, e, policy))
            elif action is Action.SURRENDER and view.can_surrender:
                value = top - 0.5 * (1.0 - nat) if self.peeked else -0.5
            else:
                if action in (Action.SPLIT, Action.SURRENDER):
                    raise RuleError(f"strategy answered {action!r} where it is not allowed")
                value = top + self._apply(hand, -1, action, policy, can_double)
        early = self.rules.surrender == "early" and self.upcard == ACE
        if policy is None and early and value < -0.5:
            return -0.5, Action.SURRENDER
        return value, action


def analyse(rules: GameRules, policy: Policy | None = None, name: str = "") -> MainGameResult:
    """Exact expected value per initial unit staked, for one round of one box.

    ``policy=None`` plays optimal composition-dependent strategy; otherwise the
    policy decides every action and is evaluated exactly.
    """
    started = time.perf_counter()
    shoe = shoe_composition(rules.decks)
    n = sum(shoe)
    total = 0.0
    by_up: list[float] = []
    for u in range(N_CLASSES):
        ctx = _UpcardAnalysis(rules, shoe, u)
        rest = ctx.base
        m = n - 1
        ev_u = 0.0
        for a in range(N_CLASSES):
            for b in range(a, N_CLASSES):
                ways = rest[a] * (rest[a] - 1) if a == b else 2 * rest[a] * rest[b]
                if ways <= 0:
                    continue
                value, _ = ctx.initial_value(a, b, policy)
                ev_u += ways / (m * (m - 1)) * value
        by_up.append(ev_u)
        total += shoe[u] / n * ev_u
    label = name or ("optimal composition-dependent" if policy is None else "policy")
    return MainGameResult(label, rules.decks, total, tuple(by_up), time.perf_counter() - started)
