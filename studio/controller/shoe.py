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
    # This shoe's last round is under way or done: the cut card came out, or a manager
    # asked for a shoe change (``change_requested_by``), which the cut card then is not.
    cut_card_seen: bool = False
    change_requested_by: str | None = None
    # The census: the codes (and serials) of the cards known to have left the shoe, as read
    # or as corrected; what makes a card impossible. A card whose code was refused as
    # impossible is not in it; a voided card stays in it (it did leave the shoe).
    dealt: Counter[str] = field(default_factory=Counter)
    serials: set[str] = field(default_factory=set)
    # The cards in the census, as counted up to table logic 3 (see ``cards_dealt``).
    cards_recorded: int = 0
    # Every card out of the shoe, by the event that showed it leave: a shoe read (device,
    # seq), whatever became of the card (dealt, refused, held, voided, impossible), or the
    # camera's sighting of a card the shoe did not scan, once a manager took it for a card.
    taken: set[tuple[str, int]] = field(default_factory=set)
    # Which count ``cards_dealt`` is: cards out of the shoe (table logic 4 on), or the
    # cards in the census (before; a refused or held card counted late or not at all).
    counts_cards_out: bool = True

    @property
    def size(self) -> int:
        return self.decks * 52

    @property
    def cards_out(self) -> int:
        """The shoe's penetration: how many cards have left it."""
        return len(self.taken)

    @property
    def cards_dealt(self) -> int:
        """The count the table logic places the cut point with (and publishes)."""
        return self.cards_out if self.counts_cards_out else self.cards_recorded

    @property
    def cards_left(self) -> int:
        return max(0, self.size - self.cards_dealt)

    def load(self, shoe_id: str, decks: int, *, verified: bool) -> None:
        self.shoe_id = shoe_id
        self.decks = decks
        self.verified = verified
        self.out_of_play = not verified
        self.cut_card_seen = False
        self.change_requested_by = None
        self.dealt.clear()
        self.serials.clear()
        self.cards_recorded = 0
        self.taken.clear()

    def impossible(self, code: str, serial: str | None, *, counted: bool = False) -> str | None:
        """Why this card cannot come out of this shoe, or None if it can. ``counted``: this
        very card is in the census already (not a copy more)."""
        copies = self.dealt[code] - (1 if counted and self.dealt[code] > 0 else 0)
        if copies >= self.decks:
            return f"{code} would be copy {copies + 1} in a {self.decks}-deck shoe"
        if serial is not None and serial in self.serials:
            return f"card serial {serial} was already dealt from shoe {self.shoe_id}"
        return None

    def take(self, source: str, seq: int) -> None:
        """A card left the shoe, shown by ``source``'s event ``seq`` (counted once)."""
        self.taken.add((source, seq))

    def record(self, code: str, serial: str | None) -> None:
        """Add a card to the census."""
        self.dealt[code] += 1
        self.cards_recorded += 1
        if serial is not None:
            self.serials.add(serial)

    def uncount(self, code: str) -> None:
        """A card recorded twice (two reports of it) is in the census once; its serial stays."""
        if self.dealt[code] > 0:
            self.dealt[code] -= 1
            self.cards_recorded -= 1

    def unrecord(self, code: str, serial: str | None) -> None:
        """Undo :meth:`record` (a corrected card leaves the census as what it was read)."""
        if self.dealt[code] > 0:
            self.dealt[code] -= 1
            self.cards_recorded -= 1
        if serial is not None:
            self.serials.discard(serial)

    def snapshot(self) -> dict[str, object]:
        return {
            "shoe_id": self.shoe_id,
            "decks": self.decks,
            "verified": self.verified,
            "out_of_play": self.out_of_play,
            # Until 2026-12-05 a manager's shoe change showed as "cut card: seen".
            "cut_card_seen": self.cut_card_seen and self.change_requested_by is None,
            "change_requested_by": self.change_requested_by,
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
