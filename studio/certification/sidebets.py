"""Exact returns of the side bets by full combinatorial enumeration.

Every function takes the number of decks in the shoe and a paytable (a mapping
from the line's key to the amount paid *to one*, e.g. ``25`` for 25:1) and
returns a :class:`SideBetResult` whose figures are exact fractions.

* Pair bets (Perfect Pairs, Player's Pair, Dealer's Pair) enumerate the
  ``C(52d, 2)`` two-card hands.
* Three-card bets (21+3, Lucky Lucky) enumerate every multiset of three card
  types (rank and suit), each weighted by ``prod C(d, k)`` for the ``k`` copies
  it uses, so the weights add up to ``C(52d, 3)``.
* Buster Blackjack enumerates the player's two cards by value class, removes
  them from the shoe and walks every dealer hand exactly
  (:mod:`studio.certification.dealer`), so it depends on the dealer's soft-17
  rule and on whether the player holds a blackjack.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from math import comb

from studio.certification.dealer import (
    ACE,
    BUST,
    N_CLASSES,
    TEN,
    dealer_graph,
    shoe_composition,
    terminal_probabilities,
)
from studio.errors import RuleError

Pays = int | Fraction | Decimal | str | float

PAIR_LINES = (
    ("perfect", "Perfect pair"),
    ("coloured", "Coloured pair"),
    ("mixed", "Red/black pair"),
)
TWENTY_ONE_PLUS_THREE_LINES = (
    ("suited_trips", "Suited trips"),
    ("straight_flush", "Straight flush"),
    ("three_of_a_kind", "Three of a kind"),
    ("straight", "Straight"),
    ("flush", "Flush"),
)
LUCKY_LUCKY_LINES = (
    ("suited_777", "Suited 777"),
    ("suited_678", "Suited 678"),
    ("777", "777"),
    ("678", "678"),
    ("suited_21", "Suited 21"),
    ("21", "21"),
    ("20", "20"),
    ("19", "19"),
)
LOSE = "lose"


def to_fraction(value: Pays) -> Fraction:
    """Exact fraction of a paytable amount (floats go through their shortest repr)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


@dataclass(frozen=True, slots=True)
class PaytableLine:
    key: str
    label: str
    probability: Fraction
    pays: Fraction
    combinations: int | None = None

    @property
    def contribution(self) -> Fraction:
        """Contribution to the expected *net* result per unit staked."""
        return self.probability * self.pays


@dataclass(frozen=True, slots=True)
class SideBetResult:
    name: str
    decks: int
    lines: tuple[PaytableLine, ...]
    total_combinations: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def expected_value(self) -> Fraction:
        return sum((line.contribution for line in self.lines), Fraction(0))

    @property
    def rtp(self) -> Fraction:
        """Return to player: what comes back, stake included, per unit staked."""
        return 1 + self.expected_value

    @property
    def hit_frequency(self) -> Fraction:
        return sum((ln.probability for ln in self.lines if ln.key != LOSE), Fraction(0))


def _checked(paytable: Mapping[str, Pays], keys: Iterable[str], bet: str) -> dict[str, Fraction]:
    known = set(keys)
    unknown = set(paytable) - known
    if unknown:
        raise RuleError(
            f"{bet}: unknown paytable line(s) {sorted(unknown)}; known: {sorted(known)}"
        )
    out = {k: to_fraction(v) for k, v in paytable.items()}
    if any(v < 0 for v in out.values()):
        raise RuleError(f"{bet}: a paytable line pays a negative amount")
    return out


def _build(
    name: str,
    decks: int,
    line_defs: Iterable[tuple[str, str]],
    paytable: dict[str, Fraction],
    counts: Mapping[str, int],
    total: int,
) -> SideBetResult:
    lines: list[PaytableLine] = []
    losing = 0
    for key, label in line_defs:
        if key in paytable:
            lines.append(
                PaytableLine(key, label, Fraction(counts[key], total), paytable[key], counts[key])
            )
        else:
            losing += counts[key]
    losing += counts.get(LOSE, 0)
    lines.append(PaytableLine(LOSE, "No win", Fraction(losing, total), Fraction(-1), losing))
    assert sum(ln.combinations or 0 for ln in lines) == total
    return SideBetResult(name, decks, tuple(lines), total)


# --- card types -----------------------------------------------------------------------------
# A card type is (rank 1..13, suit 0..3); suits 0/1 are black (S, C), 2/3 red (H, D).
_TYPES = [(rank, suit) for rank in range(1, 14) for suit in range(4)]


def _is_red(suit: int) -> bool:
    return suit >= 2


def _multiset_weight(cards: tuple[tuple[int, int], ...], decks: int) -> int:
    mult: dict[tuple[int, int], int] = defaultdict(int)
    for c in cards:
        mult[c] += 1
    weight = 1
    for k in mult.values():
        weight *= comb(decks, k)
    return weight


def _enumerate(
    decks: int, n_cards: int, classify: Callable[[tuple[tuple[int, int], ...]], str]
) -> tuple[dict[str, int], int]:
    counts: dict[str, int] = defaultdict(int)
    total = 0
    for cards in combinations_with_replacement(_TYPES, n_cards):
        w = _multiset_weight(cards, decks)
        if w:
            counts[classify(cards)] += w
            total += w
    assert total == comb(52 * decks, n_cards)
    return counts, total


def classify_pair(cards: tuple[tuple[int, int], ...]) -> str:
    (r1, s1), (r2, s2) = cards
    if r1 != r2:
        return LOSE
    if s1 == s2:
        return "perfect"
    if _is_red(s1) == _is_red(s2):
        return "coloured"
    return "mixed"


def _is_straight(ranks: list[int], ace_low: bool, ace_high: bool) -> bool:
    ranks = sorted(ranks)
    if len(set(ranks)) != 3:
        return False
    if ranks == [1, 12, 13]:  # Q-K-A
        return ace_high
    if ranks == [1, 2, 3]:
        return ace_low
    return ranks[2] - ranks[0] == 2


def classify_21_3(
    cards: tuple[tuple[int, int], ...], ace_low: bool = True, ace_high: bool = True
) -> str:
    ranks = [c[0] for c in cards]
    suits = {c[1] for c in cards}
    flush = len(suits) == 1
    if len(set(ranks)) == 1:
        return "suited_trips" if flush else "three_of_a_kind"
    straight = _is_straight(ranks, ace_low, ace_high)
    if straight and flush:
        return "straight_flush"
    if straight:
        return "straight"
    if flush:
        return "flush"
    return LOSE


def _bj_value(rank: int) -> int:
    return 1 if rank == 1 else min(rank, 10)


def classify_lucky_lucky(cards: tuple[tuple[int, int], ...]) -> str:
    ranks = sorted(c[0] for c in cards)
    suited = len({c[1] for c in cards}) == 1
    if ranks == [7, 7, 7]:
        return "suited_777" if suited else "777"
    if ranks == [6, 7, 8]:
        return "suited_678" if suited else "678"
    hard = sum(_bj_value(r) for r in ranks)
    total = hard + 10 if 1 in ranks and hard + 10 <= 21 else hard
    if total == 21:
        return "suited_21" if suited else "21"
    if total in (19, 20):
        return str(total)
    return LOSE


def pair_bet(
    decks: int, paytable: Mapping[str, Pays], name: str = "Perfect Pairs"
) -> SideBetResult:
    """Perfect Pairs, and the Player's / Dealer's Pair bets (same classes, two cards)."""
    table = _checked(paytable, (k for k, _ in PAIR_LINES), name)
    counts, total = _enumerate(decks, 2, classify_pair)
    return _build(name, decks, PAIR_LINES, table, counts, total)


def twenty_one_plus_three(
    decks: int,
    paytable: Mapping[str, Pays],
    name: str = "21+3",
    *,
    ace_low_straight: bool = True,
    ace_high_straight: bool = True,
) -> SideBetResult:
    """21+3 on the player's two cards and the dealer's up card (K-A-2 is never a straight)."""
    table = _checked(paytable, (k for k, _ in TWENTY_ONE_PLUS_THREE_LINES), name)

    def classify(cards: tuple[tuple[int, int], ...]) -> str:
        return classify_21_3(cards, ace_low_straight, ace_high_straight)

    counts, total = _enumerate(decks, 3, classify)
    return _build(name, decks, TWENTY_ONE_PLUS_THREE_LINES, table, counts, total)


def lucky_lucky(
    decks: int, paytable: Mapping[str, Pays], name: str = "Lucky Lucky"
) -> SideBetResult:
    """Lucky Lucky on the player's two cards and the dealer's up card."""
    table = _checked(paytable, (k for k, _ in LUCKY_LUCKY_LINES), name)
    counts, total = _enumerate(decks, 3, classify_lucky_lucky)
    return _build(name, decks, LUCKY_LUCKY_LINES, table, counts, total)


@dataclass(frozen=True, slots=True)
class BusterLineSpec:
    """Dealer busts with ``min_cards``..``max_cards`` cards (``None``: no upper bound)."""

    min_cards: int
    max_cards: int | None
    pays: Pays
    pays_with_player_blackjack: Pays

    def covers(self, n_cards: int) -> bool:
        return n_cards >= self.min_cards and (self.max_cards is None or n_cards <= self.max_cards)

    def span(self) -> str:
        if self.max_cards is None:
            return f"{self.min_cards}+"
        if self.max_cards == self.min_cards:
            return str(self.min_cards)
        return f"{self.min_cards}-{self.max_cards}"


def buster_probabilities(decks: int, *, hits_soft_17: bool) -> dict[tuple[int, bool], Fraction]:
    """Exact P(dealer busts with exactly k cards, player has blackjack?) for every k.

    The player's two cards are enumerated by value class and removed from the
    shoe; the dealer's two cards and her draws are then enumerated exactly. The
    dealer plays her hand out whatever the player holds.
    """
    return dict(_buster_probabilities(decks, hits_soft_17))


@cache
def _buster_probabilities(decks: int, hits_soft_17: bool) -> dict[tuple[int, bool], Fraction]:
    shoe = shoe_composition(decks)
    n_total = sum(shoe)
    graph = dealer_graph(None, hits_soft_17)
    prob: dict[tuple[int, bool], Fraction] = defaultdict(Fraction)
    pair_total = Fraction(0)
    for a in range(N_CLASSES):
        for b in range(a, N_CLASSES):
            ways = shoe[a] * (shoe[a] - 1) if a == b else 2 * shoe[a] * shoe[b]
            p_pair = Fraction(ways, n_total * (n_total - 1))
            if p_pair == 0:
                continue
            pair_total += p_pair
            rest = list(shoe)
            rest[a] -= 1
            rest[b] -= 1
            player_bj = {a, b} == {ACE, TEN}
            for hand, p in terminal_probabilities(graph, rest):
                if hand.outcome == BUST:
                    prob[(hand.n_cards, player_bj)] += p_pair * p
    assert pair_total == 1
    return dict(prob)


def buster_blackjack(
    decks: int,
    lines: Iterable[BusterLineSpec],
    *,
    hits_soft_17: bool = False,
    name: str = "Buster Blackjack",
) -> SideBetResult:
    """Buster Blackjack: pays when the dealer busts, by the number of cards in her hand.

    A player blackjack (first two cards) pays ``pays_with_player_blackjack``.
    See :func:`buster_probabilities` for what is enumerated.
    """
    specs = sorted(lines, key=lambda ln: ln.min_cards)
    if not specs:
        raise RuleError(f"{name}: empty paytable")
    if specs[0].min_cards < 3:
        raise RuleError(f"{name}: a busted dealer hand has at least 3 cards")
    prob = buster_probabilities(decks, hits_soft_17=hits_soft_17)
    out: list[PaytableLine] = []
    win = Fraction(0)
    for spec in specs:
        pays, pays_bj = to_fraction(spec.pays), to_fraction(spec.pays_with_player_blackjack)
        p_plain = sum((p for (k, bj), p in prob.items() if spec.covers(k) and not bj), Fraction(0))
        p_bj = sum((p for (k, bj), p in prob.items() if spec.covers(k) and bj), Fraction(0))
        label = f"Dealer busts with {spec.span()} cards"
        if pays == pays_bj:
            parts = [(spec.span(), label, p_plain + p_bj, pays)]
        else:
            parts = [
                (spec.span(), label + ", no player blackjack", p_plain, pays),
                (spec.span() + "_bj", label + ", player blackjack", p_bj, pays_bj),
            ]
        for key, text, p, pay in parts:
            win += p
            out.append(PaytableLine(key, text, p, pay))
    out.append(PaytableLine(LOSE, "No win", 1 - win, Fraction(-1)))
    notes = (
        f"dealer {'hits' if hits_soft_17 else 'stands on'} soft 17 and plays out her hand",
        "player's two cards removed from the shoe",
    )
    return SideBetResult(name, decks, tuple(out), None, notes)
