"""Side-bet paytables: typed, validated, serialisable pydantic models.

Every pay is "N to 1": a winning side bet returns its stake plus ``stake * N``.
The defaults are the paytables of GAME-FACTS.md §2; every line can be
overridden in a rule set (``{"side_bets": {"21+3": {"paytable": {...}}}}``).

These models are imported by the certification math (exact RTP) as well as by
the rules engine, so their field names are stable: fields may be added, never
renamed.
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The most a side bet's line pays, to 1: the seeds' largest is Buster Blackjack's 2,000
# (8+ cards with a player blackjack). Unbounded until 2026-12-07, a typo (an extra digit, a
# dropped point) was paid as written, and from 1e23 a payout could not be rounded and the
# table stopped mid-round (a CLI review).
MAX_SIDE_BET_PAYS = Decimal(10_000)
Pay = Annotated[Decimal, Field(ge=0, le=MAX_SIDE_BET_PAYS, description="pays N to 1")]


class SideBetKind(StrEnum):
    """The side bets of the three seeds. The value is the key used in rule sets and replays."""

    PERFECT_PAIRS = "perfect_pairs"
    TWENTY_ONE_PLUS_THREE = "21+3"
    PLAYERS_PAIR = "players_pair"
    DEALERS_PAIR = "dealers_pair"
    BUSTER_BLACKJACK = "buster_blackjack"
    LUCKY_LUCKY = "lucky_lucky"


class PairPaytable(BaseModel):
    """Perfect Pairs classes (seed 000; and seed 004's Player's Pair / Dealer's Pair).

    A pair is two cards of the same rank (K-Q is not a pair). ``perfect``: same
    suit; ``coloured``: same colour, other suit; ``mixed``: other colour (the
    seeds call it "mixed pair" and "red/black pair").
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["pairs"] = "pairs"
    perfect: Pay = Decimal(25)
    coloured: Pay = Decimal(12)
    mixed: Pay = Decimal(6)


class TwentyOnePlusThreePaytable(BaseModel):
    """21+3: the player's first two cards and the dealer's up card as a 3-card poker hand.

    Straights are by rank; ``ace_low_straight`` admits A-2-3 and
    ``ace_high_straight`` admits Q-K-A (both on by GAME-FACTS §2). K-A-2 never
    counts. A hand takes its best line only: suited trips > straight flush >
    three of a kind > straight > flush.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["21+3"] = "21+3"
    suited_trips: Pay = Decimal(100)
    straight_flush: Pay = Decimal(40)
    three_of_a_kind: Pay = Decimal(30)
    straight: Pay = Decimal(10)
    flush: Pay = Decimal(5)
    ace_low_straight: bool = True
    ace_high_straight: bool = True


class BusterLine(BaseModel):
    """One Buster Blackjack line: the dealer busts with ``min_cards``..``max_cards`` cards."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_cards: int = Field(ge=3)
    max_cards: int | None = Field(default=None, description="None: no upper bound")
    pays: Pay
    pays_with_player_blackjack: Pay

    @model_validator(mode="after")
    def _bounds(self) -> BusterLine:
        if self.max_cards is not None and self.max_cards < self.min_cards:
            raise ValueError(f"max_cards {self.max_cards} is below min_cards {self.min_cards}")
        return self


def _default_buster_lines() -> list[BusterLine]:
    return [
        BusterLine(
            min_cards=3, max_cards=4, pays=Decimal(2), pays_with_player_blackjack=Decimal(2)
        ),
        BusterLine(
            min_cards=5, max_cards=5, pays=Decimal(4), pays_with_player_blackjack=Decimal(4)
        ),
        BusterLine(
            min_cards=6, max_cards=6, pays=Decimal(18), pays_with_player_blackjack=Decimal(18)
        ),
        BusterLine(
            min_cards=7, max_cards=7, pays=Decimal(50), pays_with_player_blackjack=Decimal(800)
        ),
        BusterLine(
            min_cards=8, max_cards=None, pays=Decimal(250), pays_with_player_blackjack=Decimal(2000)
        ),
    ]


class BusterPaytable(BaseModel):
    """Buster Blackjack (seed 004): wins when the dealer busts; pays by dealer card count.

    A player blackjack (the box's first two cards) raises the pay to
    ``pays_with_player_blackjack``. Lines must not overlap.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["buster"] = "buster"
    lines: list[BusterLine] = Field(default_factory=_default_buster_lines, min_length=1)

    @model_validator(mode="after")
    def _no_overlap(self) -> BusterPaytable:
        ordered = sorted(self.lines, key=lambda line: line.min_cards)
        for low, high in itertools.pairwise(ordered):
            if low.max_cards is None or low.max_cards >= high.min_cards:
                raise ValueError(
                    f"Buster lines overlap: {low.min_cards}-{low.max_cards or 'any'} cards "
                    f"and {high.min_cards}-{high.max_cards or 'any'} cards"
                )
        return self

    def line_for(self, dealer_cards: int) -> BusterLine | None:
        for line in self.lines:
            if dealer_cards >= line.min_cards and (
                line.max_cards is None or dealer_cards <= line.max_cards
            ):
                return line
        return None


class LuckyLuckyPaytable(BaseModel):
    """Lucky Lucky (seed 004): the player's first two cards and the dealer's up card.

    Totals count an ace as 11 when that does not exceed 21 (A-A-9 is 21).
    ``suited_21`` / ``any_21`` exclude the 777 and 678 lines above them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["lucky_lucky"] = "lucky_lucky"
    suited_777: Pay = Decimal(200)
    suited_678: Pay = Decimal(100)
    any_777: Pay = Decimal(50)
    any_678: Pay = Decimal(25)
    suited_21: Pay = Decimal(15)
    any_21: Pay = Decimal(3)
    any_20: Pay = Decimal(2)
    any_19: Pay = Decimal(2)


Paytable = Annotated[
    PairPaytable | TwentyOnePlusThreePaytable | BusterPaytable | LuckyLuckyPaytable,
    Field(discriminator="kind"),
]

PAYTABLE_FOR: dict[SideBetKind, type[BaseModel]] = {
    SideBetKind.PERFECT_PAIRS: PairPaytable,
    SideBetKind.PLAYERS_PAIR: PairPaytable,
    SideBetKind.DEALERS_PAIR: PairPaytable,
    SideBetKind.TWENTY_ONE_PLUS_THREE: TwentyOnePlusThreePaytable,
    SideBetKind.BUSTER_BLACKJACK: BusterPaytable,
    SideBetKind.LUCKY_LUCKY: LuckyLuckyPaytable,
}


def default_paytable(kind: SideBetKind) -> Paytable:
    """The GAME-FACTS §2 paytable of a side bet."""
    model = PAYTABLE_FOR[kind]()
    assert isinstance(
        model, PairPaytable | TwentyOnePlusThreePaytable | BusterPaytable | LuckyLuckyPaytable
    )
    return model
