"""Bridge from the rules engine's :class:`~studio.rules.ruleset.RuleSet` to the math.

Everything the certification computes is derived from a ``RuleSet`` here, so
the exact figures and the live game read the same rules: the dealer's soft-17
rule, peek/hole card, doubling, splitting, surrender, Charlie, the EU ten-up
stake return, the blackjack pay, and every side bet's paytable. The
total-dependent strategy is the engine's own (:mod:`studio.rules.strategy`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import fields
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from studio.certification.main_game import Action, GameRules, HandView, Policy
from studio.certification.sidebets import (
    BusterLineSpec,
    Pays,
    SideBetResult,
    buster_blackjack,
    lucky_lucky,
    pair_bet,
    twenty_one_plus_three,
)
from studio.errors import ConfigError, RuleError
from studio.rules.paytables import (
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    SideBetKind,
    TwentyOnePlusThreePaytable,
)
from studio.rules.ruleset import (
    PRESETS,
    HoleCard,
    Peek,
    RuleSet,
    Surrender,
    ruleset_from_spec,
)
from studio.rules.strategy import Action as EngineAction
from studio.rules.strategy import strategy_for

SIDE_BET_NAMES: dict[SideBetKind, str] = {
    SideBetKind.PERFECT_PAIRS: "Perfect Pairs",
    SideBetKind.PLAYERS_PAIR: "Player's Pair",
    SideBetKind.DEALERS_PAIR: "Dealer's Pair",
    SideBetKind.TWENTY_ONE_PLUS_THREE: "21+3",
    SideBetKind.BUSTER_BLACKJACK: "Buster Blackjack",
    SideBetKind.LUCKY_LUCKY: "Lucky Lucky",
}


#: Suffixes that make a ``--ruleset`` argument a file (as does a path separator).
RULESET_FILE_SUFFIXES = (".json", ".yaml", ".yml")


class _RuleSetLoader(yaml.SafeLoader):
    """YAML as ``safe_load`` reads it, but for YAML 1.1's base-60 numbers: ``25:1`` (a
    pay, as a paytable is written) was read as 1501, and ``studio rtp`` certified a 1501:1
    paytable (a CLI review, 2026-12-07). Such a scalar stays text: a pay's ratio where a
    ratio is taken (``"6:5"``), else refused as no number."""


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_RuleSetLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# PyYAML's own patterns, less their base-60 forms.
_RuleSetLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"),
)
_RuleSetLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def read_ruleset_spec(arg: str) -> str | dict[str, Any]:
    """What ``--ruleset ARG`` names: a preset name, or the object a rule-set file holds.

    A known preset name is the preset, whatever the current directory holds. Any
    other argument is a file when it ends in ``.json``, ``.yaml`` or ``.yml`` or
    holds a path separator (``./majority_speed`` is the file); else it is taken as
    a preset name, and an unknown one is an error naming the presets.
    """
    if arg in PRESETS:
        return arg
    path = Path(arg)
    separators = [sep for sep in (os.sep, os.altsep) if sep]
    if path.suffix.lower() not in RULESET_FILE_SUFFIXES and not any(s in arg for s in separators):
        return arg
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read rule set file {arg}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"rule set file {arg} is not UTF-8 text: {exc.reason}") from exc
    try:
        data: Any = (
            json.loads(text)
            if path.suffix.lower() == ".json"
            else yaml.load(text, Loader=_RuleSetLoader)
        )
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"rule set file {arg} is not valid JSON/YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"rule set file {arg} must hold an object")
    return dict(data)


def load_ruleset(spec: str) -> RuleSet:
    """A preset name, or a JSON/YAML file holding a rule set or ``{"preset": ..., overrides}``."""
    read = read_ruleset_spec(spec)
    if isinstance(read, str) and read not in PRESETS:
        known = ", ".join(sorted(PRESETS))
        raise ConfigError(
            f"unknown preset {spec!r}; presets are {known} (a rule-set file needs a "
            f"{'/'.join(RULESET_FILE_SUFFIXES)} suffix or a path such as ./{spec})"
        )
    return ruleset_from_spec(read)


def base_preset(spec: Any) -> RuleSet | None:
    """The preset a rule-set spec is built on (``"name"`` or ``{"preset": name, ...}``).

    Its published claims are the ones the rule set inherits, whatever ``name`` the
    spec gives the result. ``None`` for a complete rule set (no ``preset``).
    """
    if isinstance(spec, str):
        return PRESETS.get(spec)
    if isinstance(spec, Mapping):
        name = spec.get("preset")
        return PRESETS.get(name) if isinstance(name, str) else None
    return None


def with_decks(rules: RuleSet, decks: int | None) -> RuleSet:
    if decks is None or decks == rules.shoe.decks:
        return rules
    return rules.with_overrides({"shoe": {"decks": decks}})


def game_rules(rules: RuleSet) -> GameRules:
    """The main-game analysis parameters of a rule set."""
    us = rules.dealer.hole_card is HoleCard.US
    surrender = {Surrender.NONE: "none", Surrender.LATE: "late", Surrender.EARLY: "early"}[
        rules.surrender
    ]
    return GameRules(
        decks=rules.shoe.decks,
        hits_soft_17=rules.dealer.hits_soft_17,
        peek_ace=us and rules.dealer.peek in (Peek.ACE, Peek.ACE_AND_TEN),
        peek_ten=us and rules.dealer.peek is Peek.ACE_AND_TEN,
        blackjack_pays=float(rules.blackjack_pays),
        double_allowed=rules.double.allowed,
        double_totals=frozenset(rules.double.totals) if rules.double.totals is not None else None,
        double_after_split=rules.double.after_split,
        double_on_split_aces=rules.double.on_split_aces,
        split_allowed=rules.split.allowed,
        split_max_hands=rules.split.max_hands,
        split_by_rank=rules.split.by == "rank",
        split_aces_one_card=rules.split.aces_one_card,
        split_resplit_aces=rules.split.resplit_aces,
        surrender=surrender,  # type: ignore[arg-type]
        charlie_cards=rules.charlie_cards,
        ten_up_returns_extra_stakes=rules.eu_ten_up_returns_extra_stakes,
        auto_stand_21=rules.auto_stand_21,
    )


class EnginePolicy:
    """The rules engine's best strategy (total-dependent), as a :class:`Policy`."""

    def __init__(self, rules: RuleSet) -> None:
        self._strategy = strategy_for(rules)

    def decide(self, view: HandView) -> Action:
        legal = [EngineAction.STAND]
        if view.can_hit:
            legal.append(EngineAction.HIT)
        if view.can_double:
            legal.append(EngineAction.DOUBLE)
        if view.can_split:
            legal.append(EngineAction.SPLIT)
        if view.can_surrender:
            legal.append(EngineAction.SURRENDER)
        chosen = self._strategy.best(
            view.hard,
            view.has_ace,
            view.n_cards,
            view.upcard + 1,
            legal,
            pair=view.is_pair,
            after_split=view.after_split,
        )
        return Action(str(chosen))

    def early_surrender(self, view: HandView) -> bool:
        return self._strategy.early_surrender(
            view.hard, view.has_ace, view.upcard + 1, view.is_pair
        )


def engine_policy(rules: RuleSet) -> Policy:
    return EnginePolicy(rules)


def _pays(model: Any, fields: Mapping[str, str]) -> dict[str, Pays]:
    return {ours: getattr(model, theirs) for ours, theirs in fields.items()}


def side_bet_result(kind: SideBetKind, paytable: Any, rules: RuleSet) -> SideBetResult:
    """Exact RTP of one side bet of a rule set, with that rule set's shoe and dealer rule."""
    decks = rules.shoe.decks
    name = SIDE_BET_NAMES[kind]
    if isinstance(paytable, PairPaytable):
        table = _pays(paytable, {"perfect": "perfect", "coloured": "coloured", "mixed": "mixed"})
        return pair_bet(decks, table, name)
    if isinstance(paytable, TwentyOnePlusThreePaytable):
        keys = ("suited_trips", "straight_flush", "three_of_a_kind", "straight", "flush")
        return twenty_one_plus_three(
            decks,
            _pays(paytable, {k: k for k in keys}),
            name,
            ace_low_straight=paytable.ace_low_straight,
            ace_high_straight=paytable.ace_high_straight,
        )
    if isinstance(paytable, LuckyLuckyPaytable):
        fields = {
            "suited_777": "suited_777",
            "suited_678": "suited_678",
            "777": "any_777",
            "678": "any_678",
            "suited_21": "suited_21",
            "21": "any_21",
            "20": "any_20",
            "19": "any_19",
        }
        return lucky_lucky(decks, _pays(paytable, fields), name)
    if isinstance(paytable, BusterPaytable):
        lines = [
            BusterLineSpec(ln.min_cards, ln.max_cards, ln.pays, ln.pays_with_player_blackjack)
            for ln in paytable.lines
        ]
        # The figure has the dealer play out her hand; the engine (logic 3) does so while a
        # Buster bet is live, even when every hand at the table is bust or surrendered.
        return buster_blackjack(decks, lines, hits_soft_17=rules.dealer.hits_soft_17, name=name)
    raise RuleError(f"no certification math for side bet {kind.value!r}")


def side_bet_results(rules: RuleSet) -> list[tuple[SideBetKind, SideBetResult]]:
    return [
        (kind, side_bet_result(kind, sb.paytable, rules)) for kind, sb in rules.side_bets.items()
    ]


def _differences(here: GameRules, there: GameRules) -> list[str]:
    out = []
    for f in fields(GameRules):
        mine, theirs = getattr(here, f.name), getattr(there, f.name)
        if mine != theirs:
            out.append(f"{f.name} {theirs} (here {mine})")
    return out


def claim_basis(
    rules: RuleSet, kind: SideBetKind | None = None, *, base: RuleSet | None = None
) -> str | None:
    """What a published claim on ``rules`` was made for, when that is not the game certified.

    ``None``: the claim (of the main game, or of side bet ``kind``) is comparable
    with the figure. A claim a preset carries (the seeds') is for that preset's
    game; a rule set built on the preset with another shoe, paytable or rule
    inherits the claim but not the game, so the report must not set one beside
    the other. A claim the rule set states itself is taken as its own.

    ``base`` is the preset the rule set was built from (:func:`base_preset` of its
    spec): a spec may rename the rule set, so its name does not tell. Without it,
    the preset of the rule set's own name, if any.
    """
    if base is None:
        base = PRESETS.get(rules.name)
    if base is None:
        return None
    if kind is None:
        if rules.published_rtp is None or rules.published_rtp != base.published_rtp:
            return None
        diff = _differences(game_rules(rules), game_rules(base))
        return f"{base.name}'s rules: {', '.join(diff)}" if diff else None
    bet, base_bet = rules.side_bets.get(kind), base.side_bets.get(kind)
    if bet is None or base_bet is None or bet.published_rtp != base_bet.published_rtp:
        return None
    diff = []
    if rules.shoe.decks != base.shoe.decks:
        diff.append(f"{base.shoe.decks} decks (here {rules.shoe.decks})")
    if bet.paytable != base_bet.paytable:
        diff.append("paytable (another one here)")
    if kind is SideBetKind.BUSTER_BLACKJACK:
        for name in ("hits_soft_17", "draws_when_no_live_hand"):
            mine, theirs = getattr(rules.dealer, name), getattr(base.dealer, name)
            if mine != theirs:
                diff.append(f"dealer {name} {theirs} (here {mine})")
    return f"{base.name}'s {', '.join(diff)}" if diff else None


def rules_digest(rules: RuleSet) -> str:
    """SHA-256 of the rule set's canonical JSON: names exactly the rules certified."""
    text = json.dumps(rules.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _ratio(value: Decimal) -> str:
    f = Fraction(value)
    return f"{f.numerator}:{f.denominator}"


def describe_main_rules(rules: RuleSet) -> str:
    """The main-game rules the analysis reads, in words, for the report's head."""
    d, s = rules.double, rules.split
    parts = [f"blackjack pays {_ratio(rules.blackjack_pays)}"]
    if not d.allowed:
        parts.append("no double")
    else:
        on = "any two cards" if d.totals is None else "totals " + ",".join(map(str, d.totals))
        parts.append(f"double on {on}")
        parts.append("double after split" if d.after_split else "no double after split")
    if not s.allowed:
        parts.append("no split")
    else:
        parts.append(f"split to {s.max_hands} hands by {s.by}")
        if s.aces_one_card:
            parts.append("split aces one card")
        if s.resplit_aces:
            parts.append("resplit aces")
    parts.append(
        {
            Surrender.NONE: "no surrender",
            Surrender.LATE: "late surrender",
            Surrender.EARLY: "early surrender",
        }[rules.surrender]
    )
    if rules.charlie_cards is not None:
        parts.append(f"{rules.charlie_cards}-card Charlie")
    if rules.dealer.hole_card is HoleCard.EU:
        ten_up = rules.eu_ten_up_returns_extra_stakes
        parts.append("ten-up natural returns extra stakes" if ten_up else "natural takes all")
    return ", ".join(parts)
