"""Exact expected value of one initial deal *through the rules engine*, by enumeration.

The simulation cross-check (:mod:`studio.certification.simulate`) samples
rounds of the engine; this module removes the sampling. For one initial
situation (the dealer's up card and the player's two cards, all three removed
from a given shoe) it plays the round through :class:`studio.rules.round.Round`
with exactly the decision code the simulation uses
(:func:`~studio.certification.simulate.play_until_card`), and every time the
engine asks for a card it branches over every value class still in the shoe,
weighting each branch by its probability of being drawn without replacement.
The result is the engine's exact expected net result per initial unit, to be
compared with the certification math for the same situation and strategy
(:func:`math_value`, :func:`compare`).

Cards are enumerated by value class (A, 2..9, ten-valued); the card handed to
the engine is a real card of that class (rank and suit do not enter the main
game when pairs split by value, which is checked, and the simulated wager has
no side bet). Nothing is merged or approximated: every card sequence the engine
can meet is played to settlement, which is why the cheap situations run on a
full shoe and the expensive ones (splits, long hitting sequences against an
ace) on a small shoe (:data:`SMALL_SHOE`); the math is exact for any shoe
composition, and both sides play the same strategy (the engine's, computed for
the rule set's deck count).

With ``situation=None`` the initial cards are enumerated too, which checks the
whole round (the deal weights included) against :func:`studio.certification.main_game.analyse` on a tiny shoe.

``python -m studio.certification.engine_exact`` runs the comparison for a list
of situations that matter under EU / no-hole-card rules, for EU, US peek, S17
and H17 rule sets (see docs/certification.md, "Engine against math").
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from enum import Enum
from typing import Any

from studio.cards import SUITS, Card
from studio.certification.dealer import ACE, N_CLASSES, Composition, shoe_composition
from studio.certification.main_game import Action, Policy, _UpcardAnalysis
from studio.certification.rulesets import engine_policy, game_rules
from studio.certification.simulate import begin_round, bet, net_result, play_until_card
from studio.errors import RuleError
from studio.rules.round import (
    Box,
    CardFor,
    HandStake,
    HandState,
    NextCard,
    Phase,
    Round,
    RoundConfig,
    Wager,
)
from studio.rules.ruleset import (
    DecisionMode,
    RuleSet,
    Surrender,
    TimeoutDefault,
    ruleset_from_spec,
)
from studio.rules.strategy import Action as EngineAction

_CLASS_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "TJQK")


def card_of(cls: int, serial: int = 0) -> Card:
    """A real card of value class ``cls`` (0 = ace .. 9 = ten-valued); ``serial`` varies it."""
    ranks = _CLASS_RANKS[cls]
    return Card(ranks[serial % len(ranks)], SUITS[(serial // len(ranks)) % len(SUITS)])


@dataclass(frozen=True, slots=True)
class Situation:
    """An initial deal: the dealer's up card and the player's two cards (value classes)."""

    up: int
    first: int
    second: int
    label: str = ""
    action: Action | None = None  # forced first decision; None: the engine strategy's

    @property
    def name(self) -> str:
        names = "A23456789T"
        deal = f"{names[self.first]},{names[self.second]} v {names[self.up]}"
        if self.action is not None:
            deal += f" {self.action.value}"
        return f"{deal} ({self.label})" if self.label else deal


@dataclass(slots=True)
class EnumerationStats:
    nodes: int = 0  # engine states expanded (a card was due and branched on)
    leaves: int = 0  # rounds settled


@dataclass(slots=True)
class _Enumerator:
    rules: RuleSet
    situation: Situation | None  # None: the initial cards are enumerated too
    first_action: EngineAction | None = None
    stats: EnumerationStats = field(default_factory=EnumerationStats)
    consent: bool = True  # the wager pays for automatic splits and doubles

    def value(self, rnd: Round, counts: list[int]) -> float:
        """Expected net result of ``rnd`` (betting open or a card due) from ``counts``."""
        if rnd.phase is Phase.BETTING and rnd.next_card().kind is not CardFor.BURN:
            bet(rnd, self.consent)
        if rnd.phase is not Phase.BETTING and not play_until_card(rnd, self.first_action):
            self.stats.leaves += 1
            return net_result(rnd)
        fixed = self._fixed_card(rnd)
        if fixed is not None:
            rnd.deal(card_of(fixed))
            return self.value(rnd, counts)
        left = sum(counts)
        if left == 0:
            where = self.situation.name if self.situation else "a round"
            raise RuleError(f"the shoe ran out of cards in {where}")
        self.stats.nodes += 1
        branches = [c for c in range(N_CLASSES) if counts[c] > 0]
        ev = 0.0
        for i, cls in enumerate(branches):
            weight = counts[cls] / left
            # the last branch may consume the round itself; the others play on a copy
            child = rnd if i == len(branches) - 1 else _copy_round(rnd)
            out = list(counts)
            out[cls] -= 1
            child.deal(card_of(cls, counts[cls]))
            ev += weight * self.value(child, out)
        return ev

    def _fixed_card(self, rnd: Round) -> int | None:
        """The situation's own cards: the player's first two and the dealer's up card."""
        if self.situation is None or rnd.phase is not Phase.DEALING:
            return None
        due = rnd.next_card()
        if due.kind is CardFor.DEALER_UP:
            return self.situation.up
        if due.kind is CardFor.SEAT_HAND:
            assert due.seat is not None
            held = len(rnd.boxes[due.seat].hands[0].cards)
            return self.situation.first if held == 0 else self.situation.second
        return None


_MUTABLE_RECORDS = (Box, Wager, HandState, HandStake)
_IMMUTABLE = (Card, NextCard, RoundConfig, RuleSet, Decimal, Enum, str, int, float, type(None))


def _clone(value: Any) -> Any:
    """Deep copy of a round's state; immutable values are shared, anything unknown refused."""
    if isinstance(value, _IMMUTABLE):  # bool is an int
        return value
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, _MUTABLE_RECORDS):
        out = copy.copy(value)
        for f in fields(value):
            setattr(out, f.name, _clone(getattr(value, f.name)))
        return out
    raise TypeError(f"cannot copy round state of type {type(value).__name__}")


def _copy_round(rnd: Round) -> Round:
    """An independent copy of a round (the engine keeps no state outside its attributes)."""
    new = copy.copy(rnd)
    for name, value in vars(rnd).items():
        if name != "events":
            setattr(new, name, _clone(value))
    new.events = list(rnd.events)  # logged events are never changed once appended
    return new


def _check_supported(rules: RuleSet) -> None:
    if rules.split.by != "value":
        raise RuleError("the engine enumeration deals value classes: split.by must be 'value'")


def forcible(rules: RuleSet, situation: Situation) -> bool:
    """Whether the situation's forced first action (if any) can be checked under ``rules``."""
    if situation.action is None:
        return True
    # early surrender against an ace is decided before any action
    return not (rules.surrender is Surrender.EARLY and situation.up == ACE)


def _for_forced_action(rules: RuleSet, situation: Situation) -> RuleSet:
    """The rule set with the box decided by its player, so a first action can be forced.

    Who decides does not enter the strategy or the settlement (the simulated
    wager consents to automatic doubles and splits). Early surrender against an
    ace comes before any action and is not forced: refused.
    """
    if not forcible(rules, situation):
        raise RuleError("a forced first action against an ace with early surrender is not checked")
    if rules.table.decision_mode is DecisionMode.PLAYER:
        return rules
    return rules.with_overrides(
        {
            "table": {"decision_mode": DecisionMode.PLAYER.value, "max_players_per_seat": 1},
            "timeouts": {"action_default": TimeoutDefault.BEST_STRATEGY.value},
        }
    )


def _initial_counts(
    rules: RuleSet, situation: Situation | None, shoe: Composition | None
) -> list[int]:
    counts = list(shoe if shoe is not None else shoe_composition(rules.shoe.decks))
    if len(counts) != N_CLASSES or min(counts) < 0:
        raise RuleError("a shoe is 10 non-negative value-class counts")
    if situation is not None:
        for cls in (situation.up, situation.first, situation.second):
            counts[cls] -= 1
            if counts[cls] < 0:
                raise RuleError(f"{situation.name}: not enough cards of that class in the shoe")
    return counts


def engine_value(
    rules: RuleSet,
    situation: Situation | None,
    shoe: Composition | None = None,
    stats: EnumerationStats | None = None,
    *,
    consent: bool = True,
) -> float:
    """The engine's exact expected net result per initial unit.

    For one initial deal (``situation``), or for a whole round when
    ``situation`` is ``None`` (the initial cards are enumerated too: only
    sensible on a small shoe). ``shoe`` (value-class counts) defaults to the rule
    set's full shoe; the situation's three cards are taken out of it.
    ``consent=False``: the wager does not consent to automatic splits and doubles.
    """
    _check_supported(rules)
    counts = _initial_counts(rules, situation, shoe)
    forced = None
    if situation is not None and situation.action is not None:
        rules = _for_forced_action(rules, situation)
        forced = EngineAction(situation.action.value)
    enum = _Enumerator(rules, situation, forced, consent=consent)
    value = enum.value(begin_round(rules), counts)
    if stats is not None:
        stats.nodes += enum.stats.nodes
        stats.leaves += enum.stats.leaves
    return value


class MathSide:
    """The certification math's exact value of initial deals under the engine's strategy."""

    def __init__(
        self, rules: RuleSet, shoe: Composition | None = None, *, consent: bool = True
    ) -> None:
        self.rules = rules
        self.consent = consent
        self.game = game_rules(rules)
        self.shoe: Composition = shoe if shoe is not None else shoe_composition(rules.shoe.decks)
        self.policy: Policy = engine_policy(rules)  # one object: the analysis caches by id
        self._contexts: dict[int, _UpcardAnalysis] = {}

    def value(self, situation: Situation) -> float:
        ctx = self._contexts.get(situation.up)
        if ctx is None:
            ctx = _UpcardAnalysis(self.game, self.shoe, situation.up)
            self._contexts[situation.up] = ctx
        if situation.action is not None:
            return ctx.first_action_value(
                situation.first,
                situation.second,
                situation.action,
                self.policy,
                consent=self.consent,
            )
        value, _ = ctx.initial_value(
            situation.first, situation.second, self.policy, consent=self.consent
        )
        return value


def math_value(
    rules: RuleSet, situation: Situation, shoe: Composition | None = None, *, consent: bool = True
) -> float:
    """The certification math's exact value of one initial deal (engine strategy)."""
    return MathSide(rules, shoe, consent=consent).value(situation)


@dataclass(frozen=True, slots=True)
class Comparison:
    situation: Situation
    shoe: Composition | None
    engine: float
    math: float
    seconds: float
    nodes: int

    @property
    def difference(self) -> float:
        return self.engine - self.math


def compare(
    rules: RuleSet, situations: Iterable[tuple[Situation, Composition | None]]
) -> Iterator[Comparison]:
    """Engine enumeration against the certification math, situation by situation."""
    maths: dict[Composition | None, MathSide] = {}
    for sit, shoe in situations:
        math = maths.get(shoe)
        if math is None:
            math = maths[shoe] = MathSide(rules, shoe)
        started = time.perf_counter()
        stats = EnumerationStats()
        engine = engine_value(rules, sit, shoe, stats)
        seconds = time.perf_counter() - started
        yield Comparison(sit, shoe, engine, math.value(sit), seconds, stats.nodes)


# --- the standard check ----------------------------------------------------------------------


def situation(
    up: int, first: int, second: int, label: str = "", action: str | None = None
) -> Situation:
    """A situation from card values (1 = ace, 10 = ten-valued); ``action`` forces the first."""
    for v in (up, first, second):
        if not 1 <= v <= 10:
            raise RuleError(f"a card value is 1 (ace) .. 10, not {v}")
    forced = Action(action) if action is not None else None
    return Situation(up - 1, first - 1, second - 1, label, forced)


#: A small shoe (value-class counts A, 2..9, T; 22 cards) holding every class:
#: splits, long hitting sequences and ace-up hands stay enumerable on it.
SMALL_SHOE: Composition = (3, 2, 1, 1, 1, 2, 1, 2, 2, 7)

#: Initial deals where EU / no-hole-card rules matter: naturals against a ten or
#: an ace, doubles and splits against them (the ten-up stake return), stiff
#: hands, soft hands, and doubles and splits against small cards for comparison.
#: Each with its shoe: ``None`` is the rule set's full shoe.
STANDARD_CHECK: tuple[tuple[Situation, Composition | None], ...] = (
    (situation(10, 1, 10, "blackjack v ten"), None),
    (situation(1, 10, 1, "blackjack v ace"), None),
    (situation(10, 10, 10, "hard 20"), None),
    (situation(10, 9, 10, "hard 19"), None),
    (situation(10, 6, 10, "hard 16"), None),
    (situation(1, 6, 10, "hard 16"), None),
    (situation(10, 3, 8, "hard 11"), None),
    (situation(10, 4, 6, "hard 10"), None),
    (situation(5, 3, 8, "hard 11"), None),
    (situation(6, 1, 7, "soft 18"), None),
    (situation(6, 1, 6, "soft 17"), None),
    (situation(10, 1, 1, "pair aces"), None),
    (situation(1, 3, 8, "hard 11"), SMALL_SHOE),
    (situation(4, 1, 3, "soft 14"), SMALL_SHOE),
    (situation(10, 8, 8, "pair 8s"), SMALL_SHOE),
    (situation(1, 8, 8, "pair 8s"), SMALL_SHOE),
    (situation(1, 1, 1, "pair aces"), SMALL_SHOE),
    (situation(6, 9, 9, "pair 9s"), SMALL_SHOE),
    (situation(6, 2, 2, "pair 2s, double after split"), SMALL_SHOE),
)

#: First actions forced on the initial hand (later decisions by the engine
#: strategy): the rule paths the strategy itself avoids under EU rules, such as
#: doubling or splitting against an ace (everything lost to a natural), or
#: splitting and doubling against a ten without the stake return.
FORCED_CHECK: tuple[tuple[Situation, Composition | None], ...] = (
    (situation(10, 6, 10, "stand on 16", "stand"), None),
    (situation(10, 3, 8, "double 11", "double"), None),
    (situation(1, 3, 8, "double 11 v ace", "double"), None),
    (situation(1, 1, 7, "stand on soft 18 v ace", "stand"), None),
    (situation(10, 8, 8, "split 8s v ten", "split"), SMALL_SHOE),
    (situation(1, 8, 8, "split 8s v ace", "split"), SMALL_SHOE),
    (situation(1, 1, 1, "split aces v ace", "split"), SMALL_SHOE),
    (situation(1, 1, 6, "double soft 17 v ace", "double"), SMALL_SHOE),
)

#: Rule sets of the standard check: EU with and without the ten-up stake
#: return, S17 and H17, against US peek games.
RULE_SETS: Mapping[str, Mapping[str, Any]] = {
    "eu-s17": {"preset": "majority_speed", "dealer": {"hole_card": "eu", "peek": "none"}},
    "eu-h17": {
        "preset": "majority_speed",
        "dealer": {"hole_card": "eu", "peek": "none", "hits_soft_17": True},
    },
    "eu-s17-no-return": {
        "preset": "majority_speed",
        "dealer": {"hole_card": "eu", "peek": "none"},
        "eu_ten_up_returns_extra_stakes": False,
    },
    "us-s17": {"preset": "majority_speed"},
    "us-h17": {"preset": "majority_speed", "dealer": {"hits_soft_17": True}},
    "classic6": {"preset": "classic6"},
    "clubhouse": {"preset": "clubhouse"},
}


def _deck_count(text: str) -> int:
    try:
        decks = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= decks <= 8:
        raise argparse.ArgumentTypeError(f"a shoe holds 1..8 decks, not {decks}")
    return decks


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m studio.certification.engine_exact",
        description="Exact EV of initial deals through the rules engine against the math.",
    )
    parser.add_argument(
        "--rules",
        nargs="*",
        default=list(RULE_SETS),
        choices=list(RULE_SETS),
        metavar="RULES",
        help=f"of {', '.join(RULE_SETS)} (default: all)",
    )
    parser.add_argument(
        "--decks", type=_deck_count, default=None, help="override the deck count (1..8)"
    )
    parser.add_argument(
        "--full-shoe", action="store_true", help="every situation on the full shoe (slow)"
    )
    parser.add_argument(
        "--only",
        choices=["all", "strategy", "forced"],
        default="all",
        help="the engine strategy's own decisions, forced first actions, or both",
    )
    parser.add_argument("--tolerance", type=_tolerance, default=1e-9)
    args = parser.parse_args(argv)
    worst = 0.0
    for name in args.rules:
        spec = dict(RULE_SETS[name])
        if args.decks is not None:
            spec["shoe"] = {"decks": args.decks}
        try:
            rules = ruleset_from_spec(spec)
        except RuleError as exc:  # e.g. a deck count the rule set refuses
            parser.error(f"--rules {name}: {' '.join(str(exc).split())}")
        print(f"{name}: {rules.shoe.decks} deck(s)", flush=True)
        lists = {
            "all": STANDARD_CHECK + FORCED_CHECK,
            "strategy": STANDARD_CHECK,
            "forced": FORCED_CHECK,
        }
        checks = [(sit, shoe) for sit, shoe in lists[args.only] if forcible(rules, sit)]
        if args.full_shoe:
            checks = [(sit, None) for sit, _ in checks]
        for c in compare(rules, checks):
            worst = max(worst, abs(c.difference))
            flag = "" if abs(c.difference) <= args.tolerance else "   <-- MISMATCH"
            shoe = "full " if c.shoe is None else "small"
            print(
                f"  {c.situation.name:<38} {shoe}  engine {c.engine:+.12f}  math {c.math:+.12f}  "
                f"diff {c.difference:+.2e}  ({c.nodes:,} states, {c.seconds:.1f} s){flag}",
                flush=True,
            )
    print(f"largest difference {worst:.2e} (tolerance {args.tolerance:.0e})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
