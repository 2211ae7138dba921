"""Exact expected return of the main game by combinatorial analysis of a full shoe.

Method (see docs/certification.md for the long version)
-------------------------------------------------------
* Cards are value classes (:mod:`studio.certification.dealer`). For every up
  card ``u`` and every two-card player hand ``{a, b}`` the three cards are
  removed from the shoe and the hand is analysed exactly; the results are
  weighted by the exact probability of that initial deal.
* A player hand is the multiset of its cards. Its value depends only on that
  multiset and on the cards otherwise known to be out of the shoe (the up card
  and, for a split hand, the other pair card(s)), so every live hand is a node
  ``(hand, context)`` of one graph shared by all up cards, and values are
  computed for all nodes at once, level by level, with numpy.
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
  cards); it is not an infinite-deck approximation. Resplits (up to four
  hands) follow the pair-card process exactly and value each final hand on the
  shoe less that outcome's pair cards (see :meth:`_UpcardAnalysis.split_value_resplit`).

Strategies: ``optimal`` chooses the best action at every node from the exact
composition (composition-dependent play); a :class:`Policy` (the engine's
total-dependent basic strategy) is evaluated exactly on the same tree.
Arithmetic is float64: results are accurate to about 1e-12.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

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
    double_on_split_aces: bool = False
    split_allowed: bool = True
    split_max_hands: int = 2
    split_by_rank: bool = False
    split_aces_one_card: bool = True
    split_resplit_aces: bool = False
    surrender: SurrenderRule = "none"
    charlie_cards: int | None = None
    ten_up_returns_extra_stakes: bool = False
    auto_stand_21: bool = True

    def __post_init__(self) -> None:
        if self.split_allowed and not 2 <= self.split_max_hands <= 4:
            raise RuleError(f"split.max_hands must be 2..4, got {self.split_max_hands}")
        ten_up_return = self.ten_up_returns_extra_stakes and not self.peek_ten
        if self.split_allowed and self.split_max_hands > 2 and ten_up_return:
            raise RuleError(
                "resplitting (split.max_hands > 2) together with the EU ten-up stake return "
                "is not supported by the main-game analysis"
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
    is_pair: bool  # two cards of the same value (splittable or not)
    upcard: int
    can_double: bool
    can_split: bool
    can_surrender: bool  # late surrender (early surrender is asked separately)
    after_split: bool
    can_hit: bool = True  # False: a split ace dealt another ace (one card each)

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


# --- the player's hands as a graph, shared by every up card ------------------------------------

_STAND, _HIT, _DOUBLE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class _HandGraph:
    """Every live player hand the analysis can meet, keyed by ``(hand, extra)``.

    ``extra`` is ``-1`` for the initial hand, or the value class of the other pair
    card for a split hand (which is then known to be out of the shoe). Rows are in
    order of decreasing card count so that a hand's successors come before it.
    """

    keys: list[tuple[Composition, int]]
    index: dict[tuple[Composition, int], int]
    hands: npt.NDArray[np.int64]  # K x 10 cards in the hand
    removed: npt.NDArray[np.int64]  # K x 10 cards out of the shoe besides the up card
    totals: npt.NDArray[np.int64]
    soft: npt.NDArray[np.bool_]
    n_cards: npt.NDArray[np.int64]
    split: npt.NDArray[np.bool_]
    can_hit: npt.NDArray[np.bool_]
    can_double: npt.NDArray[np.bool_]
    charlie: npt.NDArray[np.bool_]
    child: npt.NDArray[np.int64]  # K x 10 index of hand + card, -1 when that busts
    levels: list[npt.NDArray[np.int64]]  # row indices by card count, most cards first


def _context(pair: int, others: int) -> int:
    """Graph context of a split hand of ``pair`` with ``others`` more pair cards out."""
    return pair + N_CLASSES * (others - 1)


def _pair_of(context: int) -> int:
    return context % N_CLASSES


def _split_contexts(rules: GameRules) -> range:
    """Numbers of other pair cards out that split hands are analysed with."""
    if not rules.split_allowed or rules.split_max_hands == 2:
        return range(1, 2)
    return range(1, 2 * rules.split_max_hands)


def _can_double(rules: GameRules, hand: Composition, extra: int) -> bool:
    if not rules.double_allowed or sum(hand) != 2:
        return False
    if extra >= 0:
        if not rules.double_after_split:
            return False
        if _pair_of(extra) == ACE and (rules.split_aces_one_card or not rules.double_on_split_aces):
            return False
    return rules.double_totals is None or _total(hand)[0] in rules.double_totals


def _can_hit(rules: GameRules, hand: Composition, extra: int) -> bool:
    total, _ = _total(hand)
    n = sum(hand)
    if total >= 21 or n < 1:
        return False
    if extra >= 0 and _pair_of(extra) == ACE and rules.split_aces_one_card and n >= 2:
        return False
    return not (rules.charlie_cards is not None and n >= rules.charlie_cards)


@cache
def _hand_graph(rules: GameRules) -> _HandGraph:
    zero: Composition = (0,) * N_CLASSES
    seeds: list[tuple[Composition, int]] = []
    for a in range(N_CLASSES):
        for b in range(a, N_CLASSES):
            seeds.append((_add(_add(zero, a), b), -1))
        for others in _split_contexts(rules):  # the first card of a split hand
            seeds.append((_add(zero, a), _context(a, others)))
    seen: set[tuple[Composition, int]] = set(seeds)
    stack = list(seeds)
    while stack:
        hand, extra = stack.pop()
        if sum(hand) == 1 or _can_hit(rules, hand, extra) or _can_double(rules, hand, extra):
            for c in range(N_CLASSES):
                child = _add(hand, c)
                if _total(child)[0] <= 21 and (child, extra) not in seen:
                    seen.add((child, extra))
                    stack.append((child, extra))
    keys = sorted(seen, key=lambda k: (-sum(k[0]), k[1], k[0]))
    index = {k: i for i, k in enumerate(keys)}
    hands = np.array([k[0] for k in keys], dtype=np.int64)
    extras = np.array([k[1] for k in keys], dtype=np.int64)
    removed = hands.copy()
    rows = np.nonzero(extras >= 0)[0]
    removed[rows, extras[rows] % N_CLASSES] += extras[rows] // N_CLASSES + 1
    successor = np.full((len(keys), N_CLASSES), -1, dtype=np.int64)
    for i, (hand, extra) in enumerate(keys):
        for c in range(N_CLASSES):
            j = index.get((_add(hand, c), extra))
            if j is not None:
                successor[i, c] = j
    n_cards = hands.sum(axis=1)
    levels = [np.nonzero(n_cards == n)[0] for n in sorted(set(n_cards.tolist()), reverse=True)]
    charlie = rules.charlie_cards
    return _HandGraph(
        keys=keys,
        index=index,
        hands=hands,
        removed=removed,
        totals=np.array([_total(k[0])[0] for k in keys], dtype=np.int64),
        soft=np.array([_total(k[0])[1] for k in keys], dtype=np.bool_),
        n_cards=n_cards,
        split=extras >= 0,
        can_hit=np.array([_can_hit(rules, h, e) for h, e in keys], dtype=np.bool_),
        can_double=np.array([_can_double(rules, h, e) for h, e in keys], dtype=np.bool_),
        charlie=(n_cards >= charlie) if charlie is not None else np.zeros(len(keys), np.bool_),
        child=successor,
        levels=levels,
    )


class _UpcardAnalysis:
    """Every player hand against one up card, on one shoe, as arrays over the hand graph.

    All values are per unit of the hand's own stake and, in peek games,
    ``E[payoff * 1{no dealer natural}]`` (see the module docstring).
    """

    def __init__(self, rules: GameRules, shoe: Composition, upcard: int) -> None:
        self.rules = rules
        self.upcard = upcard
        self.graph = g = _hand_graph(rules)
        base = np.array(shoe, dtype=np.int64)
        base[upcard] -= 1
        self.base: Composition = tuple(int(x) for x in base)
        self.peeked = (upcard == ACE and rules.peek_ace) or (upcard == TEN and rules.peek_ten)
        self.obo = rules.ten_up_returns_extra_stakes and upcard == TEN and not self.peeked
        rest = base[None, :] - g.removed
        valid: npt.NDArray[np.bool_] = np.asarray((rest >= 0).all(axis=1))
        self.valid = valid
        rest = np.where(valid[:, None], rest, 0)
        n = rest.sum(axis=1).astype(np.float64)
        self.rest = rest
        with np.errstate(divide="ignore", invalid="ignore"):
            self.p = np.where(n[:, None] > 0, rest / np.where(n > 0, n, 1.0)[:, None], 0.0)
        self.nat_card = {ACE: TEN, TEN: ACE}.get(upcard)
        self.nat = self.p[:, self.nat_card] if self.nat_card is not None else np.zeros(len(g.keys))
        # natural probability after one more card c is drawn (for busts), K x 10
        if self.nat_card is None:
            self.nat_after = np.zeros_like(self.p)
        else:
            k = rest[:, self.nat_card][:, None] - (np.arange(N_CLASSES) == self.nat_card)[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                self.nat_after = np.where(n[:, None] > 1, k / np.maximum(n - 1, 1)[:, None], 0.0)
        self._dealer()
        self.term = {s: self._terminal(s) for s in (1.0, 2.0)}
        self.bust = {s: self._bust(s) for s in (1.0, 2.0)}
        self.hit_stand, self.hit = self._optimal()
        self.double = self._double()
        self._policy_cache: dict[tuple[int, bool], npt.NDArray[np.float64]] = {}
        self._no_consent: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None

    # --- dealer and terminal values ----------------------------------------------------------

    def _dealer(self) -> None:
        g = self.graph
        live = np.nonzero(self.valid & ~g.charlie)[0]
        uniq, inverse = np.unique(self.rest[live], axis=0, return_inverse=True)
        rows = outcome_matrix(uniq, self.upcard, self.rules.hits_soft_17)[inverse.ravel()]
        totals = g.totals[live]
        bust = rows[:, 5]
        # Zeros, not np.empty: rows whose total is outside 4-21 (busted, or one-card split
        # hands) are never stood on, but their garbage overflowed in _terminal (CI warned).
        e1 = np.zeros(len(live))
        for t in range(4, 22):
            sel = totals == t
            if not sel.any():
                continue
            r = rows[sel]
            if t < 17:
                e1[sel] = bust[sel] - r[:, :5].sum(axis=1)
            else:
                i = t - 17
                e1[sel] = bust[sel] + r[:, :i].sum(axis=1) - r[:, i + 1 : 5].sum(axis=1)
        self.e1 = np.zeros(len(g.keys))
        self.e1[live] = e1

    def natural_loss(self, stake: float) -> npt.NDArray[np.float64]:
        """Per row: what a standing hand of ``stake`` loses to an unpeeked dealer natural."""
        g = self.graph
        if self.peeked or self.nat_card is None:
            return np.zeros(len(g.keys))
        if self.obo:
            return np.where(g.split, -0.5, -1.0)
        return np.full(len(g.keys), -stake)

    def _terminal(self, stake: float) -> npt.NDArray[np.float64]:
        """Value of a live hand that takes no more cards (stands, or is a Charlie)."""
        g = self.graph
        loss = self.natural_loss(stake)
        stand = stake * self.e1 + self.nat * loss
        charlie = stake * (1.0 - self.nat) + self.nat * loss
        return np.where(g.charlie, charlie, stand)

    def _bust(self, stake: float) -> npt.NDArray[np.float64]:
        """K x 10: value if the hand draws card c and busts."""
        if self.peeked:
            return -stake * (1.0 - self.nat_after)
        return np.full_like(self.p, -stake)

    def _next_card(
        self, rows: npt.NDArray[np.int64], values: npt.NDArray[np.float64], stake: float
    ) -> npt.NDArray[np.float64]:
        """Expected value over the next card for ``rows``, successors valued by ``values``."""
        child = self.graph.child[rows]
        succ = np.where(child >= 0, values[np.maximum(child, 0)], self.bust[stake][rows])
        out: npt.NDArray[np.float64] = (self.p[rows] * succ).sum(axis=1)
        return out

    # --- optimal play ------------------------------------------------------------------------

    def _optimal(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        g = self.graph
        best = self.term[1.0].copy()
        hit = np.full(len(g.keys), -np.inf)
        for rows in g.levels:
            sel = rows[g.can_hit[rows]]
            if len(sel):
                hit[sel] = self._next_card(sel, best, 1.0)
                best[sel] = np.maximum(best[sel], hit[sel])
        return best, hit

    def _double(self) -> npt.NDArray[np.float64]:
        g = self.graph
        out = np.full(len(g.keys), -np.inf)
        rows = np.nonzero(g.can_double)[0]
        if len(rows):
            out[rows] = self._next_card(rows, self.term[2.0], 2.0)
        return out

    def row(self, hand: Composition, extra: int) -> int:
        return self.graph.index[(hand, extra)]

    def options(self, i: int) -> dict[Action, float]:
        """Values of the legal first actions of a two-card hand (row ``i``), split aside."""
        g = self.graph
        opts = {Action.STAND: float(self.term[1.0][i])}
        if g.can_hit[i]:
            opts[Action.HIT] = float(self.hit[i])
        if g.can_double[i]:
            opts[Action.DOUBLE] = float(self.double[i])
        return opts

    def split_value(
        self, pair: int, second: npt.NDArray[np.float64], policy: Policy | None = None
    ) -> float:
        """All hands of a split of ``pair``; ``second`` values each two-card split hand.

        ``policy`` (``None``: optimal play) decides whether a split hand dealt another
        pair card is split again; optimal play resplits whenever the rules allow.
        """
        if self.rules.split_max_hands == 2:
            return self.split_value_once(pair, second)
        resplit = policy is None or self.policy_resplits(pair, policy)
        return self.split_value_resplit(pair, second, self.rules.split_max_hands, resplit=resplit)

    def policy_resplits(self, pair: int, policy: Policy) -> bool:
        """Whether ``policy`` splits again a split hand of two ``pair`` cards.

        Asked as the engine asks it: a two-card pair after a split, split legal;
        a split ace dealt another ace under ``split_aces_one_card`` may only stand
        or split again. The answer does not depend on how many hands the split
        already made (the engine's strategy values a resplit as one more split).
        """
        if pair == ACE and not self.rules.split_resplit_aces:
            return False
        hand = _add(_add((0,) * N_CLASSES, pair), pair)
        total, soft = _total(hand)
        one_card = pair == ACE and self.rules.split_aces_one_card
        can_double = bool(self.graph.can_double[self.row(hand, _context(pair, 1))])
        view = HandView(
            total=total,
            soft=soft,
            has_ace=pair == ACE,
            n_cards=2,
            pair=pair,
            is_pair=True,
            upcard=self.upcard,
            can_double=can_double and not one_card,
            can_split=True,
            can_surrender=False,
            after_split=True,
            can_hit=not one_card,
        )
        return policy.decide(view) is Action.SPLIT

    def first_split_hand_value(
        self, pair: int, second: npt.NDArray[np.float64], max_hands: int
    ) -> float:
        """The first (right-hand) hand of a split resplit up to ``max_hands`` hands.

        The engine deals the first hand its cards, and plays it out, before any
        other hand gets its second card: while it draws pair cards (and hands may
        still be added) each pair card goes to a new hand and it draws again; so it
        ends as the pair card and the first non-pair card it draws, or as a pair at
        the cap, with every pair card it passed on known to be out. With
        ``max_hands`` 2 this is one split hand (the exchangeability argument).
        """
        one = _add((0,) * N_CLASSES, pair)
        value, reach = 0.0, 1.0  # reach: probability that the hand draws at this stage
        for hands in range(2, max_hands + 1):
            i = self.row(one, _context(pair, hands - 1))
            p, child = self.p[i], self.graph.child[i]
            for c in range(N_CLASSES):
                if p[c] > 0 and (c != pair or hands == max_hands):
                    value += reach * float(p[c] * second[child[c]])
            reach *= float(p[pair])
            if reach == 0.0:
                break
        return value

    def split_value_once(self, pair: int, second: npt.NDArray[np.float64]) -> float:
        """One split, two hands: exactly twice one hand (see the module docstring)."""
        i = self.row(_add((0,) * N_CLASSES, pair), _context(pair, 1))
        return 2.0 * float(self._next_card(np.array([i]), second, 1.0)[0])

    def split_value_resplit(
        self, pair: int, second: npt.NDArray[np.float64], max_hands: int, *, resplit: bool = True
    ) -> float:
        """Split with resplits up to ``max_hands`` hands.

        The pair-card process (which second cards are pair cards, hence how many
        hands) is followed exactly: a second card is a pair card with probability
        ``(pair cards left) / (cards left)`` given the pair and non-pair second
        cards already seen. Each final hand is then valued, with its own strategy,
        on the shoe less every pair card of the outcome; the other hands' non-pair
        second cards (unknown ranks) are removed through burn-card invariance
        (``hidden`` below). Exact for a strategy that plays each hand on its own
        cards; for optimal play the hand's strategy does not adapt to those unseen
        cards. For two hands this reproduces :meth:`split_value_once`. With
        ``resplit=False`` (a strategy that does not split this pair again) a
        second pair card makes a hand played as it is, as at the hand limit.
        """
        can_resplit = resplit and (pair != ACE or self.rules.split_resplit_aces)
        pair_left = self.base[pair] - 2
        cards_left = sum(self.base) - 2
        frontier: dict[tuple[int, int, int, int], float] = {(2, 0, 0, 0): 1.0}
        finals: dict[tuple[int, int, int], float] = {}
        while frontier:
            nxt: dict[tuple[int, int, int, int], float] = {}
            for (h, dealt, capped, other), prob in frontier.items():
                if dealt == h:
                    key = (h, capped, other)
                    finals[key] = finals.get(key, 0.0) + prob
                    continue
                left = cards_left - (h - 2) - capped - other
                p_pair = (pair_left - (h - 2) - capped) / left if left > 0 else 0.0
                if p_pair > 0:
                    if can_resplit and h < max_hands:
                        state = (h + 1, dealt, capped, other)
                    else:
                        state = (h, dealt + 1, capped + 1, other)
                    nxt[state] = nxt.get(state, 0.0) + prob * p_pair
                if p_pair < 1:
                    state = (h, dealt + 1, capped, other + 1)
                    nxt[state] = nxt.get(state, 0.0) + prob * (1.0 - p_pair)
            frontier = nxt
        zero_hand = (0,) * N_CLASSES
        one = _add(zero_hand, pair)

        def non_pair(others: int) -> tuple[float, int, int]:
            """Hand whose second card is not a pair card; (value, pair cards, cards) left."""
            i = self.row(one, _context(pair, others))
            p = self.p[i]
            left = 1.0 - p[pair]
            child = self.graph.child[i]
            ev = sum(
                p[c] / left * second[child[c]] for c in range(N_CLASSES) if c != pair and p[c] > 0
            )
            rest = self.rest[i]
            return float(ev) if left > 0 else 0.0, int(rest[pair]), int(rest.sum())

        def capped_pair(others: int) -> tuple[float, int, int]:
            """Hand of two pair cards that may not be split again."""
            i = self.row(one, _context(pair, others))
            j = int(self.graph.child[i][pair])
            rest = self.rest[j]
            return float(second[j]), int(rest[pair]), int(rest.sum())

        memo: dict[tuple[str, int, int], float] = {}

        def hidden(kind: str, others: int, hidden_cards: int) -> float:
            """Value with ``hidden_cards`` unknown non-pair cards also out of the shoe.

            Burning one unseen card does not change a fixed strategy's expectation, so
            ``V(k) = P(pair) V(k + 1) + P(non-pair) V(k, one non-pair card out)``; solved
            for the last term and applied repeatedly (for a hand conditioned on a
            non-pair second card, P(pair) is taken among the other cards).
            """
            key = (kind, others, hidden_cards)
            got = memo.get(key)
            if got is not None:
                return got
            base = non_pair if kind == "n" else capped_pair
            value, pairs_left, cards_left = base(others)
            if hidden_cards:
                # a hand conditioned on a non-pair second card sees one card fewer
                pool = cards_left - (hidden_cards - 1) - (1 if kind == "n" else 0)
                q = pairs_left / pool if pool > 0 else 0.0
                prev = hidden(kind, others, hidden_cards - 1)
                more = hidden(kind, others + 1, hidden_cards - 1) if q > 0 else 0.0
                value = (prev - q * more) / (1.0 - q) if q < 1 else prev
            memo[key] = value
            return value

        value = 0.0
        for (h, capped, other), prob in finals.items():
            out = h + capped  # pair cards out in this outcome
            if other:
                value += prob * other * hidden("n", out - 1, other - 1)
            if capped:
                value += prob * capped * hidden("c", out - 2, other)
        return value

    def optimal_split_hands(self) -> npt.NDArray[np.float64]:
        best = np.maximum(self.term[1.0], self.hit)
        return np.maximum(best, self.double)

    # --- a policy ------------------------------------------------------------------------------

    def no_consent_values(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(stand, double) values for a player who does not consent to automatic doubles.

        Seed 004: such a player's stake is never doubled or split; a double the box
        takes is one card at the original stake ("hit and then stand"), and on a
        split the stake stays on the first (right-hand) hand. That stake is the
        player's original one, so an unpeeked ten-up natural takes all of it
        (nothing is "extra" to return), on a split hand too.
        """
        if self._no_consent is None:
            g = self.graph
            if self.peeked or self.nat_card is None:
                loss = np.zeros(len(g.keys))
            else:
                loss = np.full(len(g.keys), -1.0)
            stand = self.e1 + self.nat * loss
            charlie = (1.0 - self.nat) + self.nat * loss
            term = np.where(g.charlie, charlie, stand)
            double = np.full(len(g.keys), -np.inf)
            rows = np.nonzero(g.can_double)[0]
            if len(rows):
                double[rows] = self._next_card(rows, term, 1.0)
            self._no_consent = (term, double)
        return self._no_consent

    def policy_values(self, policy: Policy, *, consent: bool = True) -> npt.NDArray[np.float64]:
        """Value of every live hand (after the first decision) played by ``policy``.

        ``consent=False``: the value to a player who does not pay for automatic
        doubles (:meth:`no_consent_values`); the hand is played the same way.
        """
        got = self._policy_cache.get((id(policy), consent))
        if got is not None:
            return got
        g = self.graph
        actions = np.full(len(g.keys), _STAND, dtype=np.int64)
        memo: dict[tuple[int, bool, bool, int, bool, bool], int] = {}
        for i in np.nonzero(g.can_hit & self.valid)[0].tolist():
            if g.n_cards[i] == 2 and not g.split[i]:
                continue  # initial hands are decided at the top, with split/surrender
            key = (
                int(g.totals[i]),
                bool(g.soft[i]),
                bool(g.hands[i, ACE] > 0),
                int(g.n_cards[i]),
                bool(g.split[i]),
                bool(g.can_double[i]),
            )
            code = memo.get(key)
            if code is None:
                view = HandView(
                    total=key[0],
                    soft=key[1],
                    has_ace=key[2],
                    n_cards=key[3],
                    pair=None,
                    is_pair=False,
                    upcard=self.upcard,
                    can_double=key[5],
                    can_split=False,
                    can_surrender=False,
                    after_split=key[4],
                )
                code = self._code(policy.decide(view), key[5])
                memo[key] = code
            actions[i] = code
        term, double = (self.term[1.0], self.double) if consent else self.no_consent_values()
        values = term.copy()
        for rows in g.levels:
            hit_rows = rows[actions[rows] == _HIT]
            if len(hit_rows):
                values[hit_rows] = self._next_card(hit_rows, values, 1.0)
            dbl_rows = rows[actions[rows] == _DOUBLE]
            values[dbl_rows] = double[dbl_rows]
        self._policy_cache[(id(policy), consent)] = values
        return values

    @staticmethod
    def _code(action: Action, can_double: bool) -> int:
        if action is Action.STAND:
            return _STAND
        if action is Action.HIT:
            return _HIT
        if action is Action.DOUBLE:
            return _DOUBLE if can_double else _HIT
        raise RuleError(f"strategy answered {action.value!r} where it is not allowed")

    # --- the initial hand --------------------------------------------------------------------

    def can_split(self, a: int, b: int) -> bool:
        r = self.rules
        if not r.split_allowed or a != b:
            return False
        # By rank, a ten-valued pair is splittable only for identical ranks; splitting
        # tens is never chosen by either strategy, so the value class is not split then.
        return not (r.split_by_rank and a == TEN)

    def initial_value(
        self, a: int, b: int, policy: Policy | None, *, consent: bool = True
    ) -> tuple[float, Action]:
        """Value of the initial hand ``{a, b}`` and the first action taken on it.

        ``consent=False`` (a policy only): the value to a player who does not pay
        for automatic splits and doubles; the box plays the policy all the same.
        """
        if policy is None and not consent:
            raise RuleError("a player without consent is valued under a strategy (policy)")
        hand = _add(_add((0,) * N_CLASSES, a), b)
        i = self.row(hand, -1)
        nat = float(self.nat[i])
        if {a, b} == {ACE, TEN}:
            return self.rules.blackjack_pays * (1.0 - nat), Action.STAND
        top = -nat if self.peeked else 0.0  # the dealer natural settled by the peek
        surrender_late = self.rules.surrender == "late"
        early = self.rules.surrender == "early" and self.upcard == ACE
        late_value = -0.5 * (1.0 - nat) if self.peeked else -0.5
        if policy is None:
            opts = self.options(i)
            if self.can_split(a, b):
                opts[Action.SPLIT] = self.split_value(a, self.optimal_split_hands())
            if surrender_late:
                opts[Action.SURRENDER] = late_value
            action = max(opts, key=lambda k: opts[k])
            value = top + opts[action]
            if early and value < -0.5:
                return -0.5, Action.SURRENDER
            return value, action
        total, soft = _total(hand)
        can_split = self.can_split(a, b)
        can_double = bool(self.graph.can_double[i])
        view = HandView(
            total=total,
            soft=soft,
            has_ace=hand[ACE] > 0,
            n_cards=2,
            pair=a if can_split else None,
            is_pair=a == b,
            upcard=self.upcard,
            can_double=can_double,
            can_split=can_split,
            can_surrender=surrender_late,
            after_split=False,
        )
        if early and policy.early_surrender(view):
            return -0.5, Action.SURRENDER
        action = policy.decide(view)
        if action is Action.DOUBLE and not can_double:
            value = self.first_action_value(a, b, Action.HIT, policy, consent=consent)
            return value, action  # double else hit
        if action not in (Action.STAND, Action.HIT, Action.DOUBLE) and not (
            (action is Action.SPLIT and can_split)
            or (action is Action.SURRENDER and surrender_late)
        ):
            raise RuleError(f"strategy answered {action.value!r} where it is not allowed")
        return self.first_action_value(a, b, action, policy, consent=consent), action

    def first_action_value(
        self, a: int, b: int, action: Action, policy: Policy | None, *, consent: bool = True
    ) -> float:
        """Value of the initial hand ``{a, b}`` when ``action`` is its first decision.

        ``policy`` takes every later decision (``None``: optimal play). Early
        surrender is asked before the peek and is not a first action here; a
        natural takes no action. ``consent=False``: the value to a player who does
        not pay for automatic splits and doubles (:meth:`no_consent_values`).
        """
        if not consent:
            if policy is None:
                raise RuleError("a player without consent is valued under a strategy (policy)")
            return self._no_consent_first_action(a, b, action, policy)
        if {a, b} == {ACE, TEN}:
            raise RuleError("a natural takes no action")
        hand = _add(_add((0,) * N_CLASSES, a), b)
        i = self.row(hand, -1)
        nat = float(self.nat[i])
        top = -nat if self.peeked else 0.0  # the dealer natural settled by the peek
        g = self.graph
        if action is Action.STAND:
            return top + float(self.term[1.0][i])
        if action is Action.HIT and g.can_hit[i]:
            if policy is None:
                return top + float(self.hit[i])
            after = self.policy_values(policy)
            return top + float(self._next_card(np.array([i]), after, 1.0)[0])
        if action is Action.DOUBLE and g.can_double[i]:
            return top + float(self.double[i])
        if action is Action.SPLIT and self.can_split(a, b):
            second = self.optimal_split_hands() if policy is None else self.policy_values(policy)
            return top + self.split_value(a, second, policy)
        if action is Action.SURRENDER and self.rules.surrender == "late":
            return top + (-0.5 * (1.0 - nat) if self.peeked else -0.5)
        raise RuleError(f"{action.value!r} is not allowed as the first action of this hand")

    def _no_consent_first_action(self, a: int, b: int, action: Action, policy: Policy) -> float:
        hand = _add(_add((0,) * N_CLASSES, a), b)
        i = self.row(hand, -1)
        top = -float(self.nat[i]) if self.peeked else 0.0
        g = self.graph
        term, double = self.no_consent_values()
        if action is Action.DOUBLE and g.can_double[i]:
            return top + float(double[i])  # one card at the original stake
        if action is Action.SPLIT and self.can_split(a, b):
            # the stake stays on the first hand, played on its own cards
            hands = self.rules.split_max_hands if self.policy_resplits(a, policy) else 2
            second = self.policy_values(policy, consent=False)
            return top + self.first_split_hand_value(a, second, hands)
        if action is Action.HIT and g.can_hit[i]:
            after = self.policy_values(policy, consent=False)
            return top + float(self._next_card(np.array([i]), after, 1.0)[0])
        if action is Action.STAND:
            return top + float(term[i])
        return self.first_action_value(a, b, action, policy)  # surrender: no extra stake


def analyse(
    rules: GameRules,
    policy: Policy | None = None,
    name: str = "",
    *,
    shoe: Composition | None = None,
    consent: bool = True,
) -> MainGameResult:
    """Exact expected value per initial unit staked, for one round of one box.

    ``policy=None`` plays optimal composition-dependent strategy; otherwise the
    policy decides every action and is evaluated exactly. ``shoe`` replaces the
    full shoe of ``rules.decks`` decks by any composition (value-class counts),
    e.g. a tiny shoe for brute-force checks. ``consent=False`` (with a policy):
    the return to a player who does not consent to automatic splits and doubles
    (seed 004), at a box that plays the policy.
    """
    started = time.perf_counter()
    if shoe is None:
        shoe = shoe_composition(rules.decks)
    if len(shoe) != N_CLASSES or min(shoe) < 0 or sum(shoe) < 12:
        raise RuleError("a shoe is 10 non-negative value-class counts with at least 12 cards")
    n = sum(shoe)
    total = 0.0
    by_up: list[float] = []
    for u in range(N_CLASSES):
        if shoe[u] == 0:
            by_up.append(0.0)
            continue
        ctx = _UpcardAnalysis(rules, shoe, u)
        rest = ctx.base
        m = n - 1
        ev_u = 0.0
        for a in range(N_CLASSES):
            for b in range(a, N_CLASSES):
                ways = rest[a] * (rest[a] - 1) if a == b else 2 * rest[a] * rest[b]
                if ways <= 0:
                    continue
                value, _ = ctx.initial_value(a, b, policy, consent=consent)
                ev_u += ways / (m * (m - 1)) * value
        by_up.append(ev_u)
        total += shoe[u] / n * ev_u
    label = name or ("optimal composition-dependent" if policy is None else "policy")
    return MainGameResult(label, rules.decks, total, tuple(by_up), time.perf_counter() - started)
