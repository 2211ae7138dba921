"""Hand arithmetic: totals, soft/hard, blackjack, bust, pairs. Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from studio.cards import Card


def total_and_soft(cards: Sequence[Card]) -> tuple[int, bool]:
    """Best total (an ace counts 11 when that does not bust) and whether it is soft."""
    hard = 0
    aces = False
    for card in cards:
        hard += card.value
        aces = aces or card.is_ace
    if aces and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def total(cards: Sequence[Card]) -> int:
    return total_and_soft(cards)[0]


def is_soft(cards: Sequence[Card]) -> bool:
    return total_and_soft(cards)[1]


def is_bust(cards: Sequence[Card]) -> bool:
    return total(cards) > 21


def is_natural(cards: Sequence[Card]) -> bool:
    """An ace and a ten-value card as a hand's only two cards (the caller excludes split hands)."""
    return len(cards) == 2 and total(cards) == 21


def same_split_group(a: Card, b: Card, by: Literal["value", "rank"]) -> bool:
    """Whether two cards may be split: same blackjack value (``K``-``Q``) or same rank."""
    return a.rank == b.rank if by == "rank" else a.value == b.value


def describe(cards: Sequence[Card]) -> str:
    """``soft 18`` / ``hard 12`` / ``bust 24``."""
    value, soft = total_and_soft(cards)
    if value > 21:
        return f"bust {value}"
    return f"{'soft' if soft else 'hard'} {value}"


def dealer_must_draw(cards: Sequence[Card], hits_soft_17: bool) -> bool:
    """The dealer's drawing rule: draw below 17; on soft 17 only under H17."""
    value, soft = total_and_soft(cards)
    if value < 17:
        return True
    return value == 17 and soft and hits_soft_17
