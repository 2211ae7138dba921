"""Playing cards and their two-character codes.

A card code is a rank from ``A23456789TJQK`` followed by a suit from ``SHDC``
(``QH``, ``TS``). Inputs also accept ``10`` for the ten (``10H``) and lower case.
This module is pure and shared by the rules engine, the drivers and the camera.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from studio.errors import CardCodeError

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"
RED_SUITS: Final = frozenset("HD")


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card. ``rank`` is a character of :data:`RANKS`, ``suit`` of :data:`SUITS`."""

    rank: str
    suit: str

    def __post_init__(self) -> None:
        if self.rank not in RANKS or len(self.rank) != 1:
            raise CardCodeError(f"unknown rank {self.rank!r}; ranks are {RANKS}")
        if self.suit not in SUITS or len(self.suit) != 1:
            raise CardCodeError(f"unknown suit {self.suit!r}; suits are {SUITS}")

    @property
    def code(self) -> str:
        return self.rank + self.suit

    @property
    def value(self) -> int:
        """Blackjack value: ace counts 1 here (soft totals are the hand's business)."""
        if self.rank == "A":
            return 1
        if self.rank in "TJQK":
            return 10
        return int(self.rank)

    @property
    def rank_index(self) -> int:
        """Position in poker order A=1 .. K=13, for straights."""
        return RANKS.index(self.rank) + 1

    @property
    def is_red(self) -> bool:
        return self.suit in RED_SUITS

    @property
    def is_ace(self) -> bool:
        return self.rank == "A"

    @property
    def is_ten_value(self) -> bool:
        return self.rank in "TJQK"

    def __str__(self) -> str:
        return self.code


def parse_card(text: str) -> Card:
    """Parse ``QH``, ``10h`` or ``ts`` into a :class:`Card`; raise :class:`CardCodeError`."""
    if not isinstance(text, str):
        raise CardCodeError(f"a card code must be a string, got {type(text).__name__}")
    raw = text.strip().upper()
    if raw.startswith("10") and len(raw) == 3:
        raw = "T" + raw[2]
    if len(raw) != 2:
        raise CardCodeError(f"unknown card {text!r}: expected rank {RANKS} + suit {SUITS}, e.g. QH")
    return Card(raw[0], raw[1])


def normalise_code(text: str) -> str:
    """Return the canonical two-character code of a card code (``10h`` -> ``TH``)."""
    return parse_card(text).code


def full_deck() -> list[Card]:
    """The 52 cards of one deck, suit by suit."""
    return [Card(rank, suit) for suit in SUITS for rank in RANKS]
