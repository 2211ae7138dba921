"""Dealer outcome probabilities over a finite shoe composition.

Cards are handled by *value class*: index ``0`` is the ace, ``1``..``8`` are the
twos to nines and ``9`` is every ten-valued card (T, J, Q, K). Suits never matter
to the dealer.

The dealer's drawing rule depends only on the multiset of cards in her hand, so
every dealer hand is a node of a small directed acyclic graph of multisets. For
each *terminal* multiset (the dealer stands, busts or has a natural) we count
``W``, the number of orders in which the dealer can draw it without having
stopped earlier. ``W`` does not depend on the shoe. The probability of a
terminal hand ``M`` drawn from a shoe of ``N`` cards with ``n_r`` cards of class
``r`` is then exactly::

    W(M) * prod_r ff(n_r, m_r) / ff(N, |M|)          (ff = falling factorial)

which is the exact recursion over the remaining shoe, without replacement.
:func:`terminal_hands` builds the graph once per (up card, soft-17 rule);
:func:`outcome_fractions` evaluates it exactly with integers,
:func:`outcome_matrix` evaluates it in floating point for many compositions at
once (used by the main-game analysis).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

N_CLASSES = 10
ACE = 0
TEN = 9
#: Outcome columns: dealer totals 17..21, bust, natural (blackjack).
OUTCOMES = ("17", "18", "19", "20", "21", "bust", "blackjack")
BUST = 5
NATURAL = 6

Composition = tuple[int, ...]


def value_of(cls: int) -> int:
    """Blackjack value of a value class (ace counts 1)."""
    return cls + 1


def shoe_composition(decks: int) -> Composition:
    """Card counts by value class of a full shoe of ``decks`` 52-card decks."""
    if decks < 1:
        raise ValueError("a shoe needs at least one deck")
    return tuple([4 * decks] * 9 + [16 * decks])


def hand_total(counts: Sequence[int]) -> tuple[int, bool]:
    """Best total of a hand given by class counts, and whether it is soft."""
    hard = sum(c * value_of(i) for i, c in enumerate(counts))
    if counts[ACE] and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


@dataclass(frozen=True, slots=True)
class TerminalHand:
    """A multiset of cards the dealer draws (up card excluded) before she stops."""

    drawn: Composition
    orders: int
    outcome: int
    n_cards: int  # cards in the dealer's final hand, up card included


@dataclass(frozen=True, slots=True)
class DealerGraph:
    """The dealer's hands as a DAG of multisets, for one up card and one soft-17 rule.

    ``steps`` lists the non-terminal multisets in order of size with, for each
    value class drawn next, the index of the successor: either another step
    (``>= 0``) or ``-1 - t`` for terminal ``t``.
    """

    upcard: int | None
    hits_soft_17: bool
    terminals: tuple[TerminalHand, ...]
    steps: tuple[tuple[Composition, tuple[int, ...]], ...]


def _classify(hand: Sequence[int], hits_soft_17: bool) -> int | None:
    """Outcome index if the dealer stops on ``hand``, else ``None``."""
    n = sum(hand)
    if n < 2:
        return None
    total, soft = hand_total(hand)
    if n == 2 and total == 21:
        return NATURAL
    if total > 21:
        return BUST
    if total > 17 or (total == 17 and not (soft and hits_soft_17)):
        return total - 17
    return None


@lru_cache(maxsize=64)
def dealer_graph(upcard: int | None, hits_soft_17: bool) -> DealerGraph:
    """Build the dealer DAG; ``upcard=None`` means both dealer cards come from the shoe."""
    start = [0] * N_CLASSES
    if upcard is not None:
        start[upcard] = 1
    zero: Composition = (0,) * N_CLASSES
    level: dict[Composition, int] = {zero: 1}
    terminal_w: dict[Composition, int] = defaultdict(int)
    terminal_info: dict[Composition, tuple[int, int]] = {}
    step_order: list[Composition] = []
    successors: dict[Composition, list[tuple[Composition, bool]]] = {}
    while level:
        nxt: dict[Composition, int] = defaultdict(int)
        for drawn, weight in level.items():
            step_order.append(drawn)
            succ: list[tuple[Composition, bool]] = []
            for cls in range(N_CLASSES):
                new = list(drawn)
                new[cls] += 1
                key = tuple(new)
                hand = [a + b for a, b in zip(start, new, strict=True)]
                outcome = _classify(hand, hits_soft_17)
                if outcome is None:
                    nxt[key] += weight
                    succ.append((key, False))
                else:
                    terminal_w[key] += weight
                    terminal_info[key] = (outcome, sum(hand))
                    succ.append((key, True))
            successors[drawn] = succ
        level = dict(nxt)
    term_keys = list(terminal_w)
    term_index = {k: i for i, k in enumerate(term_keys)}
    step_index = {k: i for i, k in enumerate(step_order)}
    terminals = tuple(
        TerminalHand(k, terminal_w[k], terminal_info[k][0], terminal_info[k][1]) for k in term_keys
    )
    steps = tuple(
        (
            drawn,
            tuple(
                (-1 - term_index[k]) if is_term else step_index[k]
                for k, is_term in successors[drawn]
            ),
        )
        for drawn in step_order
    )
    return DealerGraph(upcard, hits_soft_17, terminals, steps)


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def terminal_probabilities(
    graph: DealerGraph, shoe: Sequence[int]
) -> list[tuple[TerminalHand, Fraction]]:
    """Exact probability of every terminal dealer hand drawn from ``shoe``."""
    total = sum(shoe)
    out = []
    for hand in graph.terminals:
        num = hand.orders
        for cls, m in enumerate(hand.drawn):
            if m:
                num *= _falling(shoe[cls], m)
                if num == 0:
                    break
        if num:
            out.append((hand, Fraction(num, _falling(total, sum(hand.drawn)))))
    return out


def outcome_fractions(
    shoe: Sequence[int], upcard: int | None, hits_soft_17: bool
) -> tuple[Fraction, ...]:
    """Exact probabilities of the :data:`OUTCOMES` for a dealer drawing from ``shoe``.

    ``shoe`` must already exclude the up card. The natural is *not* conditioned
    away: the caller decides how a peek changes the game.
    """
    graph = dealer_graph(upcard, hits_soft_17)
    probs = [Fraction(0)] * len(OUTCOMES)
    for hand, p in terminal_probabilities(graph, shoe):
        probs[hand.outcome] += p
    return tuple(probs)


FloatArray = npt.NDArray[np.float64]


def outcome_matrix(shoes: npt.NDArray[np.int64], upcard: int, hits_soft_17: bool) -> FloatArray:
    """Dealer outcome probabilities for many shoes at once (float64).

    ``shoes`` has one row of class counts per composition (up card already
    removed). Returns an array of shape ``(len(shoes), 7)`` whose columns follow
    :data:`OUTCOMES`. Walks the dealer DAG forward with one probability vector per
    node, so the cost is (number of dealer nodes) x (number of compositions).
    """
    graph = dealer_graph(upcard, hits_soft_17)
    counts = shoes.astype(np.float64)
    totals = counts.sum(axis=1)
    n_rows = counts.shape[0]
    # Contiguous arrays throughout (a column of ``counts`` is strided), and the cards of a
    # class left after ``k`` of them are drawn computed once: the arithmetic is unchanged.
    columns = [np.ascontiguousarray(counts[:, cls]) for cls in range(N_CLASSES)]
    left: dict[tuple[int, int], FloatArray] = {}
    result = [np.zeros(n_rows) for _ in OUTCOMES]
    node_prob: list[FloatArray | None] = [None] * len(graph.steps)
    node_prob[0] = np.ones(n_rows)
    for idx, (drawn, succ) in enumerate(graph.steps):
        p = node_prob[idx]
        node_prob[idx] = None
        if p is None:
            continue
        denom = totals - sum(drawn)
        with np.errstate(divide="ignore", invalid="ignore"):
            base = np.where(denom > 0, p / np.where(denom > 0, denom, 1.0), 0.0)
        for cls, target in enumerate(succ):
            avail = left.get((cls, drawn[cls]))
            if avail is None:
                avail = left[cls, drawn[cls]] = np.maximum(columns[cls] - drawn[cls], 0.0)
            q = base * avail
            if target >= 0:
                cur = node_prob[target]
                node_prob[target] = q if cur is None else cur + q
            else:
                result[graph.terminals[-1 - target].outcome] += q
    return np.stack(result, axis=1)
