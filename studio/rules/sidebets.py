"""Side-bet evaluation: which paytable line (if any) a set of cards hits.

Each evaluator returns a :class:`SideBetHit` (line name and "N to 1" pay) or
``None`` for a losing bet. Money is applied in :mod:`studio.rules.settlement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from studio.cards import Card
from studio.rules.hand import total
from studio.rules.paytables import (
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    TwentyOnePlusThreePaytable,
)


@dataclass(frozen=True, slots=True)
class SideBetHit:
    line: str
    pays: Decimal  # N to 1


def pair_class(a: Card, b: Card) -> str | None:
    """``perfect`` / ``coloured`` / ``mixed`` for a same-rank pair, else None."""
    if a.rank != b.rank:
        return None
    if a.suit == b.suit:
        return "perfect"
    if a.is_red == b.is_red:
        return "coloured"
    return "mixed"


def evaluate_pairs(cards: Sequence[Card], table: PairPaytable) -> SideBetHit | None:
    """Perfect Pairs / Player's Pair / Dealer's Pair on a two-card start."""
    if len(cards) < 2:
        return None
    kind = pair_class(cards[0], cards[1])
    if kind is None:
        return None
    pays = {"perfect": table.perfect, "coloured": table.coloured, "mixed": table.mixed}[kind]
    line = {"perfect": "perfect pair", "coloured": "coloured pair", "mixed": "mixed pair"}[kind]
    return SideBetHit(line, pays)


def is_straight(cards: Sequence[Card], ace_low: bool, ace_high: bool) -> bool:
    """Three ranks in sequence. A-2-3 needs ``ace_low``, Q-K-A needs ``ace_high``; no K-A-2."""
    ranks = sorted(c.rank_index for c in cards)
    if len(set(ranks)) != 3:
        return False
    if ranks[2] - ranks[0] == 2:
        return ace_low or ranks[0] != 1  # A-2-3 is the only run starting at the ace
    return ace_high and ranks == [1, 12, 13]


def evaluate_21_plus_3(
    player: Sequence[Card], dealer_up: Card, table: TwentyOnePlusThreePaytable
) -> SideBetHit | None:
    cards = [player[0], player[1], dealer_up]
    same_rank = len({c.rank for c in cards}) == 1
    flush = len({c.suit for c in cards}) == 1
    straight = is_straight(cards, table.ace_low_straight, table.ace_high_straight)
    if same_rank and flush:
        return SideBetHit("suited trips", table.suited_trips)
    if straight and flush:
        return SideBetHit("straight flush", table.straight_flush)
    if same_rank:
        return SideBetHit("three of a kind", table.three_of_a_kind)
    if straight:
        return SideBetHit("straight", table.straight)
    if flush:
        return SideBetHit("flush", table.flush)
    return None


def evaluate_lucky_lucky(
    player: Sequence[Card], dealer_up: Card, table: LuckyLuckyPaytable
) -> SideBetHit | None:
    cards = [player[0], player[1], dealer_up]
    suited = len({c.suit for c in cards}) == 1
    ranks = sorted(c.rank for c in cards)
    if ranks == ["7", "7", "7"]:
        return (
            SideBetHit("suited 777", table.suited_777)
            if suited
            else SideBetHit("777", table.any_777)
        )
    if ranks == ["6", "7", "8"]:
        return (
            SideBetHit("suited 678", table.suited_678)
            if suited
            else SideBetHit("678", table.any_678)
        )
    value = total(cards)
    if value == 21:
        return (
            SideBetHit("suited 21", table.suited_21) if suited else SideBetHit("21", table.any_21)
        )
    if value == 20:
        return SideBetHit("20", table.any_20)
    if value == 19:
        return SideBetHit("19", table.any_19)
    return None


def evaluate_buster(
    dealer_cards: Sequence[Card], player_blackjack: bool, table: BusterPaytable
) -> SideBetHit | None:
    if total(dealer_cards) <= 21:
        return None
    line = table.line_for(len(dealer_cards))
    if line is None:
        return None
    n = len(dealer_cards)
    if player_blackjack:
        return SideBetHit(
            f"dealer busts with {n} cards, player blackjack", line.pays_with_player_blackjack
        )
    return SideBetHit(f"dealer busts with {n} cards", line.pays)
