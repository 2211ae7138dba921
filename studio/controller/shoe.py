"""What the controller knows of the shoe in play, and whether a card is possible in it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from studio.cards import RANKS, SUITS


@dataclass
class ShoeTracker:
    shoe_id: str | None = None
    decks: int = 8
    verified: bool = False  # the shuffler reported a correct count for this shoe
    out_of_play: bool = False
    cut_card_seen: bool = False
    dealt: Counter[str] = field(default_factory=Counter)
    serials: set[str] = field(default_factory=set)
    cards_dealt: int = 0

    @property
    def size(self) -> int:
        return self.decks * 52

    @property
    def cards_left(self) -> int:
        return max(0, self.size - self.cards_dealt)

    def load(self, shoe_id: str, decks: int, *, verified: bool) -> None:
        self.shoe_id = shoe_id
        self.decks = decks
        self.verified = verified
        self.out_of_play = not verified
        self.cut_card_seen = False
        self.dealt.clear()
        self.serials.clear()
        self.cards_dealt = 0

    def impossible(self, code: str, serial: str | None) -> str | None:
        """Why this card cannot come out of this shoe, or None if it can."""
        if self.dealt[code] >= self.decks:
            return f"{code} would be copy {self.dealt[code] + 1} in a {self.decks}-deck shoe"
        if serial is not None and serial in self.serials:
            return f"card serial {serial} was already dealt from shoe {self.shoe_id}"
        return None

    def record(self, code: str, serial: str | None) -> None:
        self.dealt[code] += 1
        self.cards_dealt += 1
        if serial is not None:
            self.serials.add(serial)

    def unrecord(self, code: str, serial: str | None) -> None:
        """Undo :meth:`record` (a voided card goes back out of the count)."""
        if self.dealt[code] > 0:
            self.dealt[code] -= 1
            self.cards_dealt -= 1
        if serial is not None:
            self.serials.discard(serial)

    def snapshot(self) -> dict[str, object]:
        return {
            "shoe_id": self.shoe_id,
            "decks": self.decks,
            "verified": self.verified,
            "out_of_play": self.out_of_play,
            "cut_card_seen": self.cut_card_seen,
            "cards_dealt": self.cards_dealt,
            "cards_left": self.cards_left,
        }


def census_problems(count: int, census: dict[str, int], decks: int) -> list[str]:
    """Compare a shuffler's count and per-rank census with a full ``decks``-deck shoe."""
    problems = []
    if count != decks * 52:
        problems.append(f"count {count} != {decks * 52}")
    expected = decks * len(SUITS)
    for rank in RANKS:
        got = census.get(rank, 0)
        if got != expected:
            problems.append(f"rank {rank}: {got} != {expected}")
    foreign = sorted(set(census) - set(RANKS))
    if foreign:
        problems.append(f"foreign ranks: {', '.join(foreign)}")
    return problems
