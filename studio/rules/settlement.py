"""Settlement: every wager's money, with the reason for each amount.

A wager's *stake* is all the money it put in (main stake, doubles, split
stakes, insurance, side bets); its *payout* is what comes back (stake
included); ``net = payout - stake``. For the whole round
``stakes = payouts + house_net``. Wins are rounded with the rule set's payout
rounding (seed 004: anything below 0.01 is rounded down).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from studio.cards import Card
from studio.rules.hand import is_natural, total_and_soft
from studio.rules.paytables import (
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    SideBetKind,
    TwentyOnePlusThreePaytable,
)
from studio.rules.sidebets import (
    SideBetHit,
    evaluate_21_plus_3,
    evaluate_buster,
    evaluate_lucky_lucky,
    evaluate_pairs,
)

if TYPE_CHECKING:
    from studio.rules.round import Box, HandStake, Round, Wager


def _fmt(amount: Decimal) -> str:
    """Money as a string with at least two decimals (``0.00``, ``12.50``, ``0.125``)."""
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent > -2:
        amount = amount.quantize(Decimal("0.01"))
    return f"{amount:f}"


def _ratio(value: Decimal) -> str:
    """1.5 -> '3:2', 2 -> '2:1'."""
    num, den = value.as_integer_ratio()
    return f"{num}:{den}"


@dataclass(slots=True)
class Line:
    bet: str
    stake: Decimal
    payout: Decimal
    outcome: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "bet": self.bet,
            "stake": _fmt(self.stake),
            "payout": _fmt(self.payout),
            "net": _fmt(self.payout - self.stake),
            "outcome": self.outcome,
            "reason": self.reason,
        }


@dataclass(slots=True)
class WagerResult:
    wager_id: int
    seat: int
    player: str
    behind: bool
    lines: list[Line] = field(default_factory=list)

    @property
    def stake(self) -> Decimal:
        return sum((line.stake for line in self.lines), Decimal(0))

    @property
    def payout(self) -> Decimal:
        return sum((line.payout for line in self.lines), Decimal(0))

    @property
    def net(self) -> Decimal:
        return self.payout - self.stake

    def as_dict(self) -> dict[str, Any]:
        return {
            "wager": self.wager_id,
            "seat": self.seat,
            "player": self.player,
            "kind": "behind" if self.behind else "seat",
            "stake": _fmt(self.stake),
            "payout": _fmt(self.payout),
            "net": _fmt(self.net),
            "lines": [line.as_dict() for line in self.lines],
        }


@dataclass(slots=True)
class HandResult:
    seat: int
    hand: int  # 0-based
    cards: list[str]
    total: int
    soft: bool
    outcome: str
    reason: str
    actions: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "hand": self.hand + 1,
            "cards": self.cards,
            "total": self.total,
            "soft": self.soft,
            "actions": self.actions,
            "outcome": self.outcome,
            "reason": self.reason,
        }


@dataclass(slots=True)
class RoundResult:
    ruleset: str
    status: str  # settled | cancelled
    dealer_cards: list[str]
    dealer_total: int
    dealer_soft: bool
    dealer_outcome: str
    hands: list[HandResult]
    wagers: list[WagerResult]
    box_modes: dict[int, str]
    reshuffle_after_round: bool
    burned: list[str]
    reason: str = ""

    @property
    def stakes(self) -> Decimal:
        return sum((w.stake for w in self.wagers), Decimal(0))

    @property
    def payouts(self) -> Decimal:
        return sum((w.payout for w in self.wagers), Decimal(0))

    @property
    def house_net(self) -> Decimal:
        return self.stakes - self.payouts

    def as_dict(self) -> dict[str, Any]:
        seats = sorted({h.seat for h in self.hands} | {w.seat for w in self.wagers})
        boxes = []
        for seat in seats:
            boxes.append(
                {
                    "seat": seat,
                    "mode": self.box_modes.get(seat),
                    "hands": [h.as_dict() for h in self.hands if h.seat == seat],
                    "wagers": [w.as_dict() for w in self.wagers if w.seat == seat],
                }
            )
        out: dict[str, Any] = {
            "ruleset": self.ruleset,
            "status": self.status,
            "dealer": {
                "cards": self.dealer_cards,
                "total": self.dealer_total,
                "soft": self.dealer_soft,
                "outcome": self.dealer_outcome,
            },
            "boxes": boxes,
            "totals": {
                "stakes": _fmt(self.stakes),
                "payouts": _fmt(self.payouts),
                "house_net": _fmt(self.house_net),
            },
            "reshuffle_after_round": self.reshuffle_after_round,
            "burned": self.burned,
        }
        if self.reason:
            out["reason"] = self.reason
        return out


# --- outcomes -------------------------------------------------------------------


def _dealer_outcome(rnd: Round) -> str:
    cards = rnd.dealer_cards
    if rnd.dealer_has_blackjack:
        return "blackjack"
    value, _ = total_and_soft(cards)
    if value > 21:
        return "bust"
    if not rnd.dealer_plays_out():
        return f"no draw: every player hand is bust or surrendered ({value})"
    return f"stands on {value}"


def hand_outcome(rnd: Round, box: Box, index: int) -> tuple[str, str]:
    """(outcome, reason) of one hand against the dealer."""
    rules = rnd.rules
    hand = box.hands[index]
    value, _ = total_and_soft(hand.cards)
    dealer_value, _ = total_and_soft(rnd.dealer_cards)
    dealer_bj = rnd.dealer_has_blackjack
    natural = len(box.hands) == 1 and not hand.from_split and is_natural(hand.cards)
    if hand.surrendered:
        if hand.early_surrender:
            return "surrender", "early surrender against an ace: half the stake back"
        return "surrender", "surrender: half the stake back"
    if natural:
        if dealer_bj:
            return "push", "blackjack against dealer blackjack"
        return "blackjack", f"blackjack pays {_ratio(rules.blackjack_pays)}"
    if value > 21:
        return "bust", f"bust with {value}"
    if dealer_bj:
        return "lose", f"{value} against dealer blackjack"
    charlie = rules.charlie_cards
    if charlie is not None and len(hand.cards) >= charlie:
        return "charlie", f"{len(hand.cards)}-card Charlie ({value}) wins"
    if dealer_value > 21:
        return "win", f"{value} against dealer bust ({dealer_value})"
    if value > dealer_value:
        return "win", f"{value} beats dealer {dealer_value}"
    if value == dealer_value:
        return "push", f"{value} ties dealer {dealer_value}"
    return "lose", f"{value} loses to dealer {dealer_value}"


def _hand_line(
    rnd: Round, label: str, stake: HandStake, outcome: str, reason: str, ten_up_return: bool
) -> Line:
    rules = rnd.rules
    total = stake.total
    q = rules.quantize_payout
    if outcome == "surrender":
        payout = q(stake.base / 2)
    elif outcome == "blackjack":
        payout = stake.base + q(stake.base * rules.blackjack_pays)
    elif outcome in ("win", "charlie"):
        payout = total + q(total)
    elif outcome == "push":
        payout = total
    elif outcome == "lose" and ten_up_return:
        payout = q(stake.doubled + (Decimal(0) if stake.original else stake.base))
        if payout:
            reason += "; ten up, blackjack found after play: extra stakes returned"
    else:
        payout = q(Decimal(0))
    return Line(label, total, payout, outcome, reason)


def _side_line(rnd: Round, box: Box, kind: SideBetKind, stake: Decimal) -> Line:
    rules = rnd.rules
    paytable = rules.side_bets[kind].paytable
    player = box.initial_cards
    up = rnd.dealer_up
    hit: SideBetHit | None = None
    why = ""
    if kind in (SideBetKind.PERFECT_PAIRS, SideBetKind.PLAYERS_PAIR):
        assert isinstance(paytable, PairPaytable)
        hit = evaluate_pairs(player, paytable)
        why = f"player's first two cards {_codes(player[:2])}"
    elif kind is SideBetKind.DEALERS_PAIR:
        assert isinstance(paytable, PairPaytable)
        first_two = rnd.dealer_cards[:2]
        hit = evaluate_pairs(first_two, paytable)
        why = (
            f"dealer's first two cards {_codes(first_two)}"
            if len(first_two) == 2
            else "the dealer took no second card"
        )
    elif kind is SideBetKind.TWENTY_ONE_PLUS_THREE:
        assert isinstance(paytable, TwentyOnePlusThreePaytable) and up is not None
        hit = evaluate_21_plus_3(player, up, paytable)
        why = f"{_codes([*player[:2], up])}"
    elif kind is SideBetKind.LUCKY_LUCKY:
        assert isinstance(paytable, LuckyLuckyPaytable) and up is not None
        hit = evaluate_lucky_lucky(player, up, paytable)
        why = f"{_codes([*player[:2], up])}"
    elif kind is SideBetKind.BUSTER_BLACKJACK:
        assert isinstance(paytable, BusterPaytable)
        player_bj = is_natural(player)
        hit = evaluate_buster(rnd.dealer_cards, player_bj, paytable)
        value, _ = total_and_soft(rnd.dealer_cards)
        why = f"dealer {len(rnd.dealer_cards)} cards, total {value}"
    if hit is None:
        nothing = rules.quantize_payout(Decimal(0))
        return Line(kind.value, stake, nothing, "lose", f"no paying line: {why}")
    payout = stake + rules.quantize_payout(stake * hit.pays)
    return Line(kind.value, stake, payout, "win", f"{hit.line} pays {hit.pays}:1 ({why})")


def _codes(cards: list[Card]) -> str:
    return " ".join(c.code for c in cards)


def _refund_line(bet: str, amount: Decimal, reason: str) -> Line:
    return Line(bet, amount, amount, "refund", reason)


def _wager_result(w: Wager) -> WagerResult:
    return WagerResult(wager_id=w.id, seat=w.seat, player=w.player, behind=w.behind)


def _box_mode(rnd: Round) -> dict[int, str]:
    return {seat: box.mode.value for seat, box in rnd.boxes.items()}


def _hand_results(rnd: Round, outcomes: bool) -> list[HandResult]:
    results = []
    for seat in rnd.playing_seats:
        box = rnd.boxes[seat]
        for index, hand in enumerate(box.hands):
            value, soft = total_and_soft(hand.cards)
            if outcomes:
                outcome, reason = hand_outcome(rnd, box, index)
            else:
                outcome, reason = "void", rnd.cancel_reason or "round cancelled"
            results.append(
                HandResult(
                    seat,
                    index,
                    [c.code for c in hand.cards],
                    value,
                    soft,
                    outcome,
                    reason,
                    list(hand.actions),
                )
            )
    return results


def settle_round(rnd: Round) -> RoundResult:
    """Settle a complete round (called by :meth:`Round.settle`)."""
    rules = rnd.rules
    up = rnd.dealer_up
    ten_up_return = (
        rules.eu_ten_up_returns_extra_stakes
        and rnd.dealer_blackjack_after_play
        and up is not None
        and up.is_ten_value
    )
    dealer_bj = rnd.dealer_has_blackjack
    wagers: list[WagerResult] = []
    for seat in sorted(rnd.boxes):
        box = rnd.boxes[seat]
        outcomes = {i: hand_outcome(rnd, box, i) for i in range(len(box.hands))}
        for w in box.wagers:
            res = _wager_result(w)
            wagers.append(res)
            if w.refunded is not None:
                res.lines.append(_refund_line("main", w.stake, w.refunded))
                for kind, amount in w.side_bets.items():
                    res.lines.append(_refund_line(kind.value, amount, w.refunded))
                continue
            for index, stake in enumerate(w.hand_stakes):
                if stake.total == 0:
                    continue
                label = "main" if len(box.hands) == 1 else f"hand {index + 1}"
                if w.even_money and index == 0:
                    payout = stake.total + rules.quantize_payout(stake.total)
                    res.lines.append(
                        Line(label, stake.total, payout, "even money", "blackjack: even money paid")
                    )
                    continue
                outcome, reason = outcomes[index]
                res.lines.append(_hand_line(rnd, label, stake, outcome, reason, ten_up_return))
            if w.insurance > 0:
                if dealer_bj:
                    payout = w.insurance + rules.quantize_payout(w.insurance * rules.insurance.pays)
                    line = Line(
                        "insurance",
                        w.insurance,
                        payout,
                        "win",
                        f"dealer blackjack: insurance pays {_ratio(rules.insurance.pays)}",
                    )
                else:
                    nothing = rules.quantize_payout(Decimal(0))
                    line = Line("insurance", w.insurance, nothing, "lose", "no dealer blackjack")
                res.lines.append(line)
            for kind, amount in w.side_bets.items():
                res.lines.append(_side_line(rnd, box, kind, amount))
    value, soft = total_and_soft(rnd.dealer_cards)
    return RoundResult(
        ruleset=rules.name,
        status="settled",
        dealer_cards=[c.code for c in rnd.dealer_cards],
        dealer_total=value,
        dealer_soft=soft,
        dealer_outcome=_dealer_outcome(rnd),
        hands=_hand_results(rnd, outcomes=True),
        wagers=wagers,
        box_modes=_box_mode(rnd),
        reshuffle_after_round=rnd.reshuffle_after_round,
        burned=[c.code for c in rnd.burned],
    )


def refund_round(rnd: Round, reason: str) -> RoundResult:
    """Void the round: every amount a wager put in comes back (called by :meth:`Round.cancel`)."""
    why = f"round cancelled: {reason}" if reason else "round cancelled"
    wagers: list[WagerResult] = []
    for seat in sorted(rnd.boxes):
        for w in rnd.boxes[seat].wagers:
            res = _wager_result(w)
            wagers.append(res)
            if w.hand_stakes:
                for index, stake in enumerate(w.hand_stakes):
                    if stake.total:
                        label = "main" if index == 0 else f"hand {index + 1}"
                        res.lines.append(_refund_line(label, stake.total, why))
            else:
                res.lines.append(_refund_line("main", w.stake, why))
            if w.insurance:
                res.lines.append(_refund_line("insurance", w.insurance, why))
            for kind, amount in w.side_bets.items():
                res.lines.append(_refund_line(kind.value, amount, why))
    value, soft = total_and_soft(rnd.dealer_cards)
    return RoundResult(
        ruleset=rnd.rules.name,
        status="cancelled",
        dealer_cards=[c.code for c in rnd.dealer_cards],
        dealer_total=value,
        dealer_soft=soft,
        dealer_outcome="void",
        hands=_hand_results(rnd, outcomes=False),
        wagers=wagers,
        box_modes=_box_mode(rnd),
        reshuffle_after_round=rnd.reshuffle_after_round,
        burned=[c.code for c in rnd.burned],
        reason=why,
    )
