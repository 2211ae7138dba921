"""The controller's view of one rules-engine round.

The controller keeps the list of operations it applied (``ops``) so that a round
can be rebuilt with a card corrected or voided; this adapter turns those plain,
JSON-able operations into calls on :class:`studio.rules.round.Round` and turns
the engine's answers into the dicts the contract carries.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from studio.controller.commands import (
    BetCommand,
    DecisionCommand,
    EarlySurrenderCommand,
    InsuranceCommand,
    VoteCommand,
    logged_command,
)
from studio.rules.hand import total as hand_total
from studio.rules.round import LOGIC as RULES_LOGIC
from studio.rules.round import CardFor, Phase, Round, RoundConfig, Wager
from studio.rules.ruleset import RuleSet

RoundOp = tuple[str, Any]

_KINDS = {
    CardFor.SEAT_HAND: "seat",
    CardFor.DEALER_UP: "dealer_up",
    CardFor.DEALER_HOLE: "dealer_hole",
    CardFor.DEALER_DRAW: "dealer_draw",
    CardFor.BURN: "burn",
}


class EngineRound:
    def __init__(
        self, ruleset: RuleSet, config: RoundConfig | None = None, logic: int = RULES_LOGIC
    ) -> None:
        self.round = Round(ruleset, config, logic=logic)
        self.round.open_betting()

    # -- operations ---------------------------------------------------------------
    def apply(self, op: RoundOp) -> dict[str, Any] | None:
        kind, arg = op
        rnd = self.round
        if kind == "card":
            before = self._play_so_far()
            used = rnd.deal(str(arg))
            # A Best Strategy box (a Majority Rules seat with too few players) is played as
            # the card lands: what that did is the card's too (the table says it).
            return {"for": used.as_dict(), **self._played_since(before)}
        if kind == "close_betting":
            rnd.close_betting()
            return None
        if kind == "cut_card":
            rnd.cut_card()
            return None
        if kind == "timeout":
            pending = rnd.pending_decision()
            before = self._play_so_far()
            rnd.timeout()
            return {
                "default_for": pending.as_dict() if pending else None,
                **self._played_since(before),
            }
        if kind == "command":
            before = self._play_so_far()
            answer = self._command(arg)
            if "taken" in (answer or {}):
                return answer  # a bet: what it took is the whole answer
            return {**(answer or {}), **self._played_since(before)} or None
        raise ValueError(f"unknown round operation {kind!r}")

    # What a decision, a vote, an insurance answer or a timeout did, from engine logic 6:
    # the platform debits a double, a split or an insurance when it is made, and one made
    # automatically (a timeout, a vote, best strategy) it had no other word of until the
    # settlement (a review: a consenting split took a player from 1.00 to 2.00 unsaid).
    def _play_so_far(self) -> tuple[dict[tuple[int, int], int], dict[int, Decimal]]:
        actions = {
            (box.seat, index): len(hand.actions)
            for box in self.round.boxes.values()
            for index, hand in enumerate(box.hands)
        }
        return actions, {w.id: _extra(w) for w in self._wagers()}

    def _played_since(
        self, before: tuple[dict[tuple[int, int], int], dict[int, Decimal]]
    ) -> dict[str, Any]:
        if self.round.logic < 6:
            return {}
        counts, extras = before
        actions = [
            {"seat": box.seat, "hand": index, "action": action}
            for box in self.round.boxes.values()
            for index, hand in enumerate(box.hands)
            for action in hand.actions[counts.get((box.seat, index), 0) :]
        ]
        added = []
        for wager in self._wagers():
            extra = _extra(wager)
            if extra != extras.get(wager.id, Decimal(0)):
                added.append(
                    {
                        "wager": wager.id,
                        "seat": wager.seat,
                        "player": wager.player,
                        "behind": wager.behind,
                        "amount": str(extra - extras.get(wager.id, Decimal(0))),
                        "extra": str(extra),
                    }
                )
        return {"actions": actions, "added": added}

    def extras(self) -> dict[int, tuple[Wager, Decimal]]:
        """Each live wager with what it has added beyond its bet (see ``_extra``)."""
        return {w.id: (w, _extra(w)) for w in self._wagers()}

    def _wagers(self) -> list[Wager]:
        return [w for box in self.round.boxes.values() for w in box.wagers if w.refunded is None]

    def _command(self, data: dict[str, Any]) -> dict[str, Any] | None:
        command = logged_command.validate_python(data)  # an engine op, logged
        rnd = self.round
        if isinstance(command, BetCommand):
            wager_id = rnd.place_wager(
                command.seat,
                command.player,
                command.stake,
                # From engine logic 4 the engine judges every one (a negative amount, an
                # unknown name); up to 3 those of 0 or less were dropped here, unjudged.
                command.side_bets
                if rnd.logic >= 4
                else {k: v for k, v in command.side_bets.items() if v > 0},
                behind=command.behind,
                auto_consent=command.consent_auto,
                behind_double=command.behind_double,
                behind_split=command.behind_split,
                allow_bet_behind=command.allow_bet_behind,
            )
            if rnd.logic >= 4:
                # What the rule set took, rounded: the platform debits this, not what it sent.
                wager = next(w for w in rnd.boxes[command.seat].wagers if w.id == wager_id)
                return {
                    "taken": {
                        "stake": str(wager.stake),
                        "side_bets": {k.value: str(v) for k, v in wager.side_bets.items()},
                    }
                }
        elif isinstance(command, DecisionCommand):
            if command.action == "surrender" and rnd.phase is Phase.INSURANCE:
                rnd.early_surrender(command.seat, True, player=command.player)
            else:
                rnd.act(command.seat, command.action, player=command.player)
        elif isinstance(command, VoteCommand):
            rnd.vote(command.seat, command.player, command.action)
        elif isinstance(command, InsuranceCommand):
            # Without a seat: each seat the player sits on (not their bets behind, which
            # answer for themselves); none open is the engine's own refusal.
            seats: list[int | None] = (
                [command.seat]
                if command.seat is not None
                else list(rnd.insurance_seats(command.player)) or [None]
            )
            for seat in seats:
                rnd.insurance(command.player, command.take, seat)
        elif isinstance(command, EarlySurrenderCommand):
            rnd.early_surrender(command.seat, command.take, player=command.player)
        return None

    # -- queries ------------------------------------------------------------------
    def next_card(self) -> dict[str, Any] | None:
        due = self.round.next_card()
        if due.kind is CardFor.NONE:
            return None
        out: dict[str, Any] = {"kind": _KINDS[due.kind]}
        if due.kind is CardFor.SEAT_HAND:
            out.update(seat=due.seat, hand=due.hand)
        return out

    def pending(self) -> dict[str, Any] | None:
        decision = self.round.pending_decision()
        if decision is None or decision.kind == "betting":
            return None
        return decision.as_dict()

    def finished(self) -> bool:
        return self.round.phase is Phase.COMPLETE

    def hole_card_shown(self) -> bool:
        """Is the dealer's hole card face up by now (the dealer's turn, or the round over)?"""
        return self.round.phase in (
            Phase.DEALER,
            Phase.COMPLETE,
            Phase.SETTLED,
            Phase.CANCELLED,
        )

    def dealer_done(self) -> bool:
        return self.round.phase in (Phase.COMPLETE, Phase.SETTLED, Phase.CANCELLED)

    def has_wagers(self) -> bool:
        return any(box.playing for box in self.round.boxes.values())

    def wagers(self) -> list[dict[str, Any]]:
        return [
            {
                "seat": w.seat,
                "player": w.player,
                "stake": str(w.stake),
                "side_bets": {str(k.value): str(v) for k, v in w.side_bets.items()},
                "behind": w.behind,
            }
            for box in self.round.boxes.values()
            for w in box.wagers
        ]

    @property
    def cards_dealt(self) -> int:
        """The cards this round took from the shoe (burns included)."""
        return self.round.cards_dealt

    @property
    def reshuffle_after_round(self) -> bool:
        """The shoe is changed after this round (cut card, cut point or every round)."""
        return self.round.reshuffle_after_round

    def settle(self) -> dict[str, Any]:
        return _result_dict(self.round.settle())

    def cancel(self, reason: str = "") -> dict[str, Any]:
        return _result_dict(self.round.cancel(reason))

    def snapshot(self) -> dict[str, Any]:
        rnd = self.round
        boxes = []
        for seat in sorted(rnd.boxes):
            box = rnd.boxes[seat]
            boxes.append(
                {
                    "seat": seat,
                    "mode": box.mode.value,
                    "players": sorted({w.player for w in box.wagers}),
                    "stake": str(sum((w.stake for w in box.live_wagers), Decimal(0))),
                    "hands": [
                        {
                            "cards": [c.code for c in hand.cards],
                            "total": hand.total if hand.cards else 0,
                            "soft": hand.soft if hand.cards else False,
                            "bust": hand.bust if hand.cards else False,
                            "doubled": hand.doubled,
                            "surrendered": hand.surrendered,
                            "stood": hand.stood,
                        }
                        for hand in box.hands
                    ],
                }
            )
        # The hole card is scanned but face down: never stream it before the dealer's turn.
        hidden = rnd.phase in (Phase.DEALING, Phase.INSURANCE, Phase.PLAYERS)
        shown = [
            "??" if hidden and card is rnd.dealer_hole else card.code for card in rnd.dealer_cards
        ]
        visible = [c for c in rnd.dealer_cards if not (hidden and c is rnd.dealer_hole)]
        return {
            "boxes": boxes,
            "dealer": {"cards": shown, "total": hand_total(visible) if visible else 0},
            "engine_phase": rnd.phase.value,
        }


def _result_dict(result: Any) -> dict[str, Any]:
    for attr in ("as_dict", "to_dict"):
        method = getattr(result, attr, None)
        if callable(method):
            value = method()
            assert isinstance(value, dict)
            return value
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
        assert isinstance(value, dict)
        return value
    raise TypeError(f"cannot serialise round result {type(result).__name__}")


def _extra(wager: Wager) -> Decimal:
    """What ``wager`` put in beyond its bet and side bets: doubles, split stakes and
    insurance (none before the deal)."""
    if not wager.hand_stakes:
        return Decimal(0)
    staked = sum((stake.total for stake in wager.hand_stakes), Decimal(0))
    return staked - wager.stake + wager.insurance
