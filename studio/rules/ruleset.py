"""Rule sets: typed, validated, serialisable blackjack rules, and the three presets.

A :class:`RuleSet` is a frozen pydantic model (``extra="forbid"``). Build one
with :func:`ruleset_from_spec` from a preset name or ``{"preset": name,
...overrides}``; overrides merge into the preset field by field (nested
objects merge recursively, lists and scalars replace) and the result is
validated as a whole. An impossible combination raises
:class:`~studio.rules.errors.RuleSetError` with a message saying why.

Presets (see docs/rules-engine.md for the mapping to the seed texts):

* ``clubhouse``      – seed 000, Clubhouse Blackjack
* ``classic6``       – seed 001, classic multi-player blackjack
* ``majority_speed`` – seed 004, Majority Rules Speed Blackjack

Field names are stable (the certification math imports these models): add
fields, never rename them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from fractions import Fraction
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from studio.keys import unknown_key_words
from studio.rules.errors import RuleSetError
from studio.rules.paytables import (
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    Paytable,
    SideBetKind,
    TwentyOnePlusThreePaytable,
)

Money = Annotated[Decimal, Field(ge=0)]

# A pay as a table's sign says it ("6:5", "3:2", "2:1"): won to staked, whole numbers.
_RATIO = re.compile(r"^\s*([0-9]{1,6})\s*:\s*([0-9]{1,6})\s*$")
_PAY_WORDS = 'a decimal multiple of the stake, e.g. 1.5 (3:2) or 1.2 (6:5), or the ratio "6:5"'


def _pay_ratio(value: Any) -> Any:
    """A pay written as a ratio, as GAME-FACTS and the pit write it (``"6:5"`` is 1.2),
    taken only when it is an exact decimal (``"7:3"`` is refused: say which rounding is
    meant by writing the decimal). Until 2026-12-07 "6:5" was "Input should be a valid
    decimal" (an operator's review)."""
    if not isinstance(value, str):
        return value
    match = _RATIO.match(value)
    if match is None:
        try:
            Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"{_PAY_WORDS}; got {value[:40]!r}") from None
        return value
    won, staked = int(match[1]), int(match[2])
    if staked == 0:
        raise ValueError(f"{value!r} divides by 0: {_PAY_WORDS}")
    rest = Fraction(won, staked).denominator
    for factor in (2, 5):
        while rest % factor == 0:
            rest //= factor
    if rest != 1:
        raise ValueError(
            f"{value!r} is no exact decimal ({won}/{staked}): write the pay as the decimal "
            "meant, rounded as the published rules round it"
        )
    return Decimal(won) / Decimal(staked)


# A pay: a decimal multiple of the stake, or its ratio as a string.
Pay = Annotated[Decimal, BeforeValidator(_pay_ratio)]
# The largest stake a game command carries (12 digits, 3 of them decimals): a limit above
# it is no limit (and from 1e26 Decimal cannot round a stake to cents at all).
MAX_STAKE: Final = Decimal("999999999.999")


class HoleCard(StrEnum):
    US = "us"  # dealer takes two cards in the initial deal
    EU = "eu"  # dealer takes the second card only after every player has finished


class Peek(StrEnum):
    ACE_AND_TEN = "ace_and_ten"
    ACE = "ace"
    NONE = "none"


class DealerFirstCard(StrEnum):
    UP = "up"  # first dealer card face up, second (hole) face down: seeds 000, 004
    HOLE = "hole"  # first dealer card face down, second face up: seed 001


class Surrender(StrEnum):
    NONE = "none"
    LATE = "late"  # first action on a two-card hand, after the dealer peeked
    EARLY = "early"  # offered with insurance when the dealer shows an ace, before the peek


class Burn(StrEnum):
    NONE = "none"
    EACH_ROUND = "each_round"  # seed 004: one card burned right before betting opens
    NEW_SHOE = "new_shoe"  # one card burned in the first round of a new shoe


class DecisionMode(StrEnum):
    PLAYER = "player"  # the seated player decides for the box
    MAJORITY_RULES = "majority_rules"  # every player on the seat votes (seed 004)


class TimeoutDefault(StrEnum):
    STAND = "stand"
    BEST_STRATEGY = "best_strategy"
    MAJORITY_VOTE = "majority_vote"  # plurality of cast votes, else best strategy


class Rounding(StrEnum):
    DOWN = "down"
    HALF_UP = "half_up"
    HALF_EVEN = "half_even"

    @property
    def decimal_mode(self) -> str:
        return {
            Rounding.DOWN: ROUND_DOWN,
            Rounding.HALF_UP: ROUND_HALF_UP,
            Rounding.HALF_EVEN: ROUND_HALF_EVEN,
        }[self]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShoeRules(_Model):
    decks: int = Field(ge=1, le=8)
    reshuffle_every_round: bool = False
    cut_card_fraction: Decimal | None = Field(
        default=Decimal("0.5"),
        gt=0,
        lt=1,
        description="share of the shoe dealt before the cut (divider) card; None: no cut card",
    )
    burn: Burn = Burn.NONE


class DealerRules(_Model):
    hits_soft_17: bool = False
    hole_card: HoleCard = HoleCard.US
    peek: Peek = Peek.ACE_AND_TEN
    first_card: DealerFirstCard = DealerFirstCard.UP
    draws_when_no_live_hand: bool = Field(
        default=False,
        description="False (all seeds): no dealer draw when every hand is bust or surrendered",
    )


class DoubleRules(_Model):
    allowed: bool = True
    totals: list[int] | None = Field(
        default=None, description="hard/soft totals a two-card hand may double on; None: any"
    )
    after_split: bool = False
    on_split_aces: bool = False


class SplitRules(_Model):
    allowed: bool = True
    max_hands: int = Field(default=2, ge=2, le=4, description="2: split once")
    by: Literal["value", "rank"] = "value"
    aces_one_card: bool = True
    resplit_aces: bool = False


# The most a natural or an insurance bet pays, to 1 (MAX_BLACKJACK_PAYS). Until 2026-12-07 a pay had no upper
# bound: "65" (the colon of "6:5" dropped), "32" or "15" passed `config check` and was
# played, a 65:1 natural paid with real money; from 1e23 a payout could not be rounded and
# the table stopped mid-round (a CLI review). No blackjack table pays a natural more than
# 2:1, and insurance pays 2:1.
MAX_BLACKJACK_PAYS: Final = Decimal(2)


def _at_most_two_to_one(value: Decimal) -> Decimal:
    if value > MAX_BLACKJACK_PAYS:
        raise ValueError(
            f"{value} to 1 is more than this pays at any table (at most 2, 2:1): write the "
            'ratio with its colon ("6:5" is 1.2, "3:2" is 1.5)'
        )
    return value


class InsuranceRules(_Model):
    offered: bool = True
    cost: Decimal = Field(default=Decimal("0.5"), gt=0, le=1, description="share of the stake")
    pays: Annotated[Pay, AfterValidator(_at_most_two_to_one)] = Field(
        default=Decimal(2), ge=0, description='2:1 is 2 (or "2:1"); at most 2'
    )
    even_money: bool = False


class TableRules(_Model):
    seats: int = Field(ge=1, le=7)
    decision_mode: DecisionMode = DecisionMode.PLAYER
    max_players_per_seat: int | None = Field(default=1, ge=1, description="None: unlimited")
    majority_min_players: int = Field(
        default=2, ge=1, description="fewer players on a seat: Best Strategy mode"
    )
    bet_behind: bool = False
    min_bet: Money = Decimal("1.00")
    max_bet: Money = Decimal("1000.00")


class SideBetRules(_Model):
    paytable: Paytable
    min_bet: Money = Decimal("0.50")
    max_bet: Money = Decimal("100.00")
    published_rtp: Decimal | None = Field(
        default=None, description="RTP (percent) the game's published rules claim, if any"
    )


class TimeoutRules(_Model):
    action_default: TimeoutDefault = TimeoutDefault.STAND
    insurance_default: bool = False
    surrender_default: bool = False
    betting_seconds: int = Field(default=15, ge=1)
    decision_seconds: int = Field(default=15, ge=1)


class RoundingRules(_Model):
    # At least a thousandth (a command's stake has 3 decimals at most): a smaller quantum
    # passed the check, and the table then refused every stake (a CLI review, 2026-12-07).
    quantum: Decimal = Field(default=Decimal("0.01"), ge=Decimal("0.001"))
    stakes: Rounding = Rounding.DOWN
    payouts: Rounding = Rounding.DOWN


class RuleSet(_Model):
    """A complete blackjack rule set. Serialise with ``model_dump(mode="json")``."""

    name: str
    source: str = ""
    shoe: ShoeRules
    dealer: DealerRules = DealerRules()
    blackjack_pays: Annotated[Pay, AfterValidator(_at_most_two_to_one)] = Field(
        default=Decimal("1.5"),
        gt=0,
        description='3:2 is 1.5 (or "3:2"), 6:5 is 1.2; at most 2 (2:1)',
    )
    auto_stand_21: bool = True
    double: DoubleRules = DoubleRules()
    split: SplitRules = SplitRules()
    surrender: Surrender = Surrender.NONE
    insurance: InsuranceRules = InsuranceRules()
    charlie_cards: int | None = Field(default=None, ge=3, le=21)
    eu_ten_up_returns_extra_stakes: bool = Field(
        default=False,
        description=(
            "a dealer blackjack found after players acted (no peek / EU) with a ten up "
            "returns double and split stakes; with an ace up they are lost"
        ),
    )
    table: TableRules
    side_bets: dict[SideBetKind, SideBetRules] = Field(default_factory=dict)
    published_rtp: Decimal | None = Field(
        default=None,
        description="main-game RTP (percent) the published rules claim; reported, never used",
    )
    timeouts: TimeoutRules = TimeoutRules()
    rounding: RoundingRules = RoundingRules()

    @model_validator(mode="after")
    def _consistent(self) -> RuleSet:
        problems: list[str] = []
        d = self.dealer
        if d.hole_card is HoleCard.EU and d.peek is not Peek.NONE:
            problems.append("EU dealing has no hole card to peek at: set dealer.peek to 'none'")
        if d.hole_card is HoleCard.EU and d.first_card is DealerFirstCard.HOLE:
            problems.append(
                "dealer.first_card 'hole' needs a hole card: EU dealing gives the dealer one card"
            )
        if self.shoe.reshuffle_every_round and self.shoe.cut_card_fraction is not None:
            problems.append(
                "a shoe reshuffled every round has no cut card: set shoe.cut_card_fraction to null"
            )
        if self.insurance.even_money and not self.insurance.offered:
            problems.append("even money is a form of insurance: it needs insurance.offered")
        if self.double.after_split and not (self.double.allowed and self.split.allowed):
            problems.append("double.after_split needs both doubling and splitting allowed")
        if self.double.on_split_aces and not self.double.after_split:
            problems.append("double.on_split_aces needs double.after_split")
        if self.double.on_split_aces and self.split.aces_one_card:
            problems.append("split aces receive one card only: they cannot be doubled")
        if self.split.resplit_aces and self.split.max_hands < 3:
            problems.append("resplitting aces needs split.max_hands of 3 or more")
        if self.double.totals is not None and any(t < 4 or t > 21 for t in self.double.totals):
            problems.append("double.totals must lie between 4 and 21")
        if self.surrender is Surrender.LATE and (
            d.hole_card is not HoleCard.US or d.peek is not Peek.ACE_AND_TEN
        ):
            # Late surrender comes after the peek: against a ten or an ace not checked for
            # blackjack it would give half back against a blackjack found later (a
            # review: 16 against AC, no peek, K in the hole: 5.00 back on 10.00).
            problems.append(
                "late surrender comes after the dealer checked for blackjack: it needs "
                "dealer.hole_card 'us' and dealer.peek 'ace_and_ten' (else use 'early')"
            )
        quantum = self.rounding.quantum
        if quantum.normalize().as_tuple().digits != (1,):
            # Decimal.quantize reads only the quantum's exponent: 0.05 rounded as 0.01.
            problems.append(
                f"rounding.quantum {quantum} is not a power of ten (1, 0.1, 0.01, 0.001...)"
            )
        t = self.table
        for name, limit in [("table.max_bet", t.max_bet)] + [
            (f"side bet {kind.value!r} max_bet", rules.max_bet)
            for kind, rules in self.side_bets.items()
        ]:
            if limit > MAX_STAKE:
                problems.append(
                    f"{name} {limit} is above the largest stake a command carries ({MAX_STAKE})"
                )
        if t.min_bet > t.max_bet:
            problems.append(f"table.min_bet {t.min_bet} is above table.max_bet {t.max_bet}")
        if t.min_bet <= 0:
            problems.append("table.min_bet must be positive")
        if t.decision_mode is DecisionMode.PLAYER and t.max_players_per_seat != 1:
            problems.append(
                "several players share a seat only under Majority Rules: "
                "set table.max_players_per_seat to 1 or table.decision_mode to 'majority_rules'"
            )
        if t.decision_mode is DecisionMode.MAJORITY_RULES and t.bet_behind:
            problems.append(
                "bet behind follows a seated player's decisions: not with Majority Rules"
            )
        if (
            self.timeouts.action_default is TimeoutDefault.MAJORITY_VOTE
            and t.decision_mode is not DecisionMode.MAJORITY_RULES
        ):
            problems.append("timeouts.action_default 'majority_vote' needs Majority Rules seats")
        for kind, rules in self.side_bets.items():
            expected = _PAYTABLE_KIND[kind]
            if not isinstance(rules.paytable, expected):
                problems.append(
                    f"side bet {kind.value!r} needs a {expected.__name__}, "
                    f"got {type(rules.paytable).__name__}"
                )
            if rules.min_bet > rules.max_bet:
                problems.append(f"side bet {kind.value!r}: min_bet is above max_bet")
            if rules.min_bet <= 0:
                problems.append(f"side bet {kind.value!r}: min_bet must be positive")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # --- convenience -------------------------------------------------------

    def quantize_stake(self, amount: Decimal) -> Decimal:
        """Round a stake as the rule set says (seed 004: down at the third decimal)."""
        return amount.quantize(self.rounding.quantum, rounding=self.rounding.stakes.decimal_mode)

    def quantize_payout(self, amount: Decimal) -> Decimal:
        """Round a pay or refund (seed 004: anything below 0.01 is rounded down)."""
        return amount.quantize(self.rounding.quantum, rounding=self.rounding.payouts.decimal_mode)

    def with_overrides(self, overrides: Mapping[str, Any]) -> RuleSet:
        """A new rule set: this one with ``overrides`` merged in and validated."""
        merged = _deep_merge(self.model_dump(mode="json"), dict(overrides))
        return _validate(merged)


_PAYTABLE_KIND: dict[SideBetKind, type[BaseModel]] = {
    SideBetKind.PERFECT_PAIRS: PairPaytable,
    SideBetKind.PLAYERS_PAIR: PairPaytable,
    SideBetKind.DEALERS_PAIR: PairPaytable,
    SideBetKind.TWENTY_ONE_PLUS_THREE: TwentyOnePlusThreePaytable,
    SideBetKind.BUSTER_BLACKJACK: BusterPaytable,
    SideBetKind.LUCKY_LUCKY: LuckyLuckyPaytable,
}


def _deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        base_value = out.get(key)
        same_kind = not (
            isinstance(value, dict)
            and isinstance(base_value, dict)
            and "kind" in value
            and value["kind"] != base_value.get("kind")
        )
        if isinstance(value, dict) and isinstance(base_value, dict) and same_kind:
            out[key] = _deep_merge(base_value, value)
        else:
            out[key] = value
    return out


def _validate(data: Mapping[str, Any]) -> RuleSet:
    try:
        return RuleSet.model_validate(data)
    except ValidationError as exc:
        reasons = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            hint = (
                unknown_key_words(RuleSet, err["loc"]) if err["type"] == "extra_forbidden" else None
            )
            if hint is not None:  # the key meant (pydantic's "Extra inputs are not permitted")
                msg = f"unknown key ({hint})"
            reasons.append(f"{where}: {msg}" if where else msg)
        raise RuleSetError("invalid rule set: " + "; ".join(reasons)) from exc


def _clubhouse() -> RuleSet:
    return RuleSet(
        name="clubhouse",
        source="seed 000 Clubhouse Blackjack",
        shoe=ShoeRules(decks=8, cut_card_fraction=Decimal("0.5")),
        dealer=DealerRules(hits_soft_17=False, hole_card=HoleCard.US, peek=Peek.ACE_AND_TEN),
        double=DoubleRules(after_split=False),
        split=SplitRules(max_hands=2, by="value", aces_one_card=True),
        surrender=Surrender.EARLY,
        insurance=InsuranceRules(offered=True, even_money=False),
        table=TableRules(seats=7, bet_behind=True),
        side_bets={
            SideBetKind.PERFECT_PAIRS: SideBetRules(paytable=PairPaytable()),
            SideBetKind.TWENTY_ONE_PLUS_THREE: SideBetRules(paytable=TwentyOnePlusThreePaytable()),
        },
        timeouts=TimeoutRules(action_default=TimeoutDefault.STAND, insurance_default=False),
    )


def _classic6() -> RuleSet:
    return RuleSet(
        name="classic6",
        source="seed 001 classic multi-player blackjack",
        published_rtp=Decimal("99.27"),
        shoe=ShoeRules(decks=6, reshuffle_every_round=True, cut_card_fraction=None),
        dealer=DealerRules(
            hits_soft_17=True,
            hole_card=HoleCard.US,
            peek=Peek.ACE_AND_TEN,
            first_card=DealerFirstCard.HOLE,
        ),
        double=DoubleRules(after_split=False),
        split=SplitRules(max_hands=2, by="value", aces_one_card=True),
        surrender=Surrender.NONE,
        insurance=InsuranceRules(offered=True, even_money=True),
        table=TableRules(seats=3, min_bet=Decimal("1.00"), max_bet=Decimal("100.00")),
        timeouts=TimeoutRules(
            action_default=TimeoutDefault.BEST_STRATEGY,
            insurance_default=False,
            betting_seconds=30,
            decision_seconds=15,
        ),
    )


def _majority_speed() -> RuleSet:
    return RuleSet(
        name="majority_speed",
        source="seed 004 Majority Rules Speed Blackjack",
        published_rtp=Decimal("99.54"),
        shoe=ShoeRules(decks=8, cut_card_fraction=Decimal("0.5"), burn=Burn.NONE),
        dealer=DealerRules(hits_soft_17=False, hole_card=HoleCard.US, peek=Peek.ACE_AND_TEN),
        double=DoubleRules(after_split=True),
        split=SplitRules(max_hands=2, by="value", aces_one_card=True),
        surrender=Surrender.NONE,
        insurance=InsuranceRules(offered=True, even_money=False),
        charlie_cards=10,
        eu_ten_up_returns_extra_stakes=True,
        table=TableRules(
            seats=2,
            decision_mode=DecisionMode.MAJORITY_RULES,
            max_players_per_seat=None,
            majority_min_players=2,
        ),
        side_bets={
            # Published claims from the seed's "Return to player" section.
            SideBetKind.TWENTY_ONE_PLUS_THREE: SideBetRules(
                paytable=TwentyOnePlusThreePaytable(), published_rtp=Decimal("96.25")
            ),
            SideBetKind.PLAYERS_PAIR: SideBetRules(
                paytable=PairPaytable(), published_rtp=Decimal("95.90")
            ),
            SideBetKind.DEALERS_PAIR: SideBetRules(
                paytable=PairPaytable(), published_rtp=Decimal("95.90")
            ),
            SideBetKind.BUSTER_BLACKJACK: SideBetRules(
                paytable=BusterPaytable(), published_rtp=Decimal("93.88")
            ),
            SideBetKind.LUCKY_LUCKY: SideBetRules(
                paytable=LuckyLuckyPaytable(), published_rtp=Decimal("96.1")
            ),
        },
        timeouts=TimeoutRules(action_default=TimeoutDefault.MAJORITY_VOTE, insurance_default=False),
    )


PRESETS: dict[str, RuleSet] = {
    "clubhouse": _clubhouse(),
    "classic6": _classic6(),
    "majority_speed": _majority_speed(),
}


def preset(name: str) -> RuleSet:
    """One of :data:`PRESETS`; raise :class:`RuleSetError` naming the known presets."""
    try:
        return PRESETS[name]
    except KeyError:
        known = ", ".join(sorted(PRESETS))
        raise RuleSetError(f"unknown preset {name!r}; presets are {known}") from None


def ruleset_from_spec(spec: str | Mapping[str, Any] | RuleSet) -> RuleSet:
    """Build a rule set from ``"preset"``, ``{"preset": ..., **overrides}`` or a full dict."""
    if isinstance(spec, RuleSet):
        return spec
    if isinstance(spec, str):
        return preset(spec)
    if not isinstance(spec, Mapping):
        raise RuleSetError(f"a rule set is a preset name or an object, got {type(spec).__name__}")
    data = dict(spec)
    name = data.pop("preset", None)
    if name is None:
        return _validate(data)
    if not isinstance(name, str):
        raise RuleSetError("ruleset.preset must be a preset name")
    return preset(name).with_overrides(data)
