"""Blackjack rules engine: pure (no I/O, no asyncio, no clock, no randomness).

The engine takes events and answers questions; the caller owns time, cards
and money movements. Full guide: docs/rules-engine.md; replay format:
docs/replay.md.

Rule sets (:mod:`studio.rules.ruleset`, :mod:`studio.rules.paytables`)::

    rules = ruleset_from_spec("majority_speed")            # or "clubhouse", "classic6"
    rules = ruleset_from_spec({"preset": "majority_speed",
                               "dealer": {"hole_card": "eu", "peek": "none"}})
    rules.model_dump(mode="json")                          # serialisable; RuleSetError if invalid

One round (:class:`studio.rules.round.Round`)::

    rnd = Round(rules, RoundConfig(shoe_cards_dealt=0, new_shoe=False))
    rnd.open_betting()
    rnd.place_wager(seat, player, "10.00", {"21+3": "1.00"},
                    behind=False, auto_consent=False,           # Majority Rules consent
                    behind_double=True, behind_split="follow",  # bet-behind presets
                    allow_bet_behind=True) -> wager id
    rnd.withdraw(seat, player)                                  # undo while betting is open
    rnd.close_betting()                                         # refunds bets behind empty seats

    rnd.next_card() -> NextCard(kind, seat, hand)               # kind: seat_hand | dealer_up |
                                                                #   dealer_hole | dealer_draw |
                                                                #   burn | none; hand is 0-based
    rnd.deal("QH") -> NextCard                                  # CardNotDueError if none is due
    rnd.cut_card()                                              # the cut/divider card came out

    rnd.pending_decision() -> Decision | None                   # kind: betting | insurance | action
    rnd.legal_actions(seat, hand=None) -> list[Action]          # hit stand double split surrender
    rnd.act(seat, "hit", player="p1")                           # the seated player only
                                                                #   (IllegalActionError)
    rnd.vote(seat, player, "stand")                             # Majority Rules seats
    rnd.insurance(player, take, seat=None)                      # insurance / even money on a BJ
    rnd.early_surrender(seat, take, player="p1")                # early surrender against an ace
    rnd.seated_player(seat) -> str | None                       # who decides for a box
    rnd.timeout()                                               # the rule set's default for
                                                                #   whatever decision is pending
    rnd.phase                                                   # Phase.COMPLETE -> settle
    rnd.settle() -> RoundResult                                 # .as_dict(), .stakes, .payouts,
                                                                #   .house_net, lines with reasons
    rnd.cancel(reason) -> RoundResult                           # void: every stake refunded

    rnd.events                                                  # JSON-able event log
    Round.replay(rules, events, config) / Round.from_dict(rnd.to_dict())   # rebuild after a crash

Audit / acceptance: :func:`studio.rules.replay.replay_round` (dict -> dict) and
``studio replay ROUND.json``.

Errors all derive from :class:`studio.errors.RuleError` (see
:mod:`studio.rules.errors`). Money is :class:`decimal.Decimal` throughout.
"""

from studio.rules.errors import (
    CardNotDueError,
    IllegalActionError,
    ReplayInputError,
    RoundStateError,
    RuleSetError,
    WagerError,
)
from studio.rules.round import BoxMode, CardFor, Decision, NextCard, Phase, Round, RoundConfig
from studio.rules.ruleset import PRESETS, RuleSet, preset, ruleset_from_spec
from studio.rules.settlement import RoundResult
from studio.rules.strategy import Action

__all__ = [
    "PRESETS",
    "Action",
    "BoxMode",
    "CardFor",
    "CardNotDueError",
    "Decision",
    "IllegalActionError",
    "NextCard",
    "Phase",
    "ReplayInputError",
    "Round",
    "RoundConfig",
    "RoundResult",
    "RoundStateError",
    "RuleSet",
    "RuleSetError",
    "WagerError",
    "preset",
    "ruleset_from_spec",
]
