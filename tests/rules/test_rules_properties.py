"""Property tests over random shoes, wagers and decisions (hypothesis)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studio.cards import Card, full_deck
from studio.rules.errors import CardNotDueError
from studio.rules.hand import dealer_must_draw, total_and_soft
from studio.rules.round import Box, BoxMode, CardFor, Phase, Round
from studio.rules.ruleset import RuleSet, preset

RULESETS: dict[str, RuleSet] = {
    "clubhouse": preset("clubhouse"),
    "classic6": preset("classic6"),
    "majority_speed": preset("majority_speed"),
    "majority_eu": preset("majority_speed").with_overrides(
        {"dealer": {"hole_card": "eu", "peek": "none"}, "shoe": {"burn": "each_round"}}
    ),
    "late_h17_das": preset("clubhouse").with_overrides(
        {
            "surrender": "late",
            "dealer": {"hits_soft_17": True},
            "double": {"after_split": True},
            "split": {"max_hands": 4},
            "charlie_cards": 5,
        }
    ),
}

DECK = full_deck()
STAKES = [Decimal("1.00"), Decimal("2.50"), Decimal("10.00"), Decimal("10.01"), Decimal("25.00")]


def _taken(rnd: Round) -> Decimal:
    """Money the wagers put in, counted from the round state (independent of settlement)."""
    total = Decimal(0)
    for box in rnd.boxes.values():
        for w in box.wagers:
            if w.refunded is not None or not w.hand_stakes:
                total += w.stake
            else:
                total += sum((s.total for s in w.hand_stakes), Decimal(0))
            total += w.insurance + sum(w.side_bets.values(), Decimal(0))
    return total


def _place_wagers(rnd: Round, data: st.DataObject) -> None:
    rules = rnd.rules
    seats = data.draw(
        st.lists(
            st.integers(1, rules.table.seats), min_size=1, max_size=rules.table.seats, unique=True
        )
    )
    sides = list(rules.side_bets)
    for seat in seats:
        players = 1
        if rules.table.max_players_per_seat is None:
            players = data.draw(st.integers(1, 5))
        behind = rules.table.bet_behind and data.draw(st.booleans())
        allow = not behind or data.draw(st.booleans())
        behind_first = behind and data.draw(st.booleans())  # refunded at the close if refused
        if behind_first:
            _place_behind(rnd, seat, data)
        for i in range(players):
            side = {k.value: "1.00" for k in sides if data.draw(st.booleans())}
            rnd.place_wager(
                seat,
                f"p{seat}-{i}",
                data.draw(st.sampled_from(STAKES)),
                side,
                auto_consent=data.draw(st.booleans()),
                allow_bet_behind=allow,
            )
        if behind and not behind_first and allow:
            _place_behind(rnd, seat, data)


def _place_behind(rnd: Round, seat: int, data: st.DataObject) -> None:
    rnd.place_wager(
        seat,
        f"b{seat}",
        "5.00",
        behind=True,
        behind_double=data.draw(st.booleans()),
        behind_split=data.draw(st.sampled_from(["follow", "first_hand"])),
    )


def _check_card_target(rnd: Round, due: Any, before: dict[str, int]) -> None:
    if due.kind is CardFor.SEAT_HAND:
        assert len(rnd.boxes[due.seat].hands[due.hand].cards) >= 1
    elif due.kind in (CardFor.DEALER_UP, CardFor.DEALER_HOLE, CardFor.DEALER_DRAW):
        assert len(rnd.dealer_cards) == before["dealer"] + 1
    elif due.kind is CardFor.BURN:
        assert len(rnd.burned) == before["burned"] + 1


def _still_open(rnd: Round, box: Box, marker: tuple[Any, ...]) -> bool:
    """Whether the action round identified by ``marker`` is still open for votes."""
    now = rnd.pending_decision()
    if now is None or now.kind != "action":
        return False
    hand = box.hands[now.hand or 0]
    return (now.seat, now.hand, len(hand.actions)) == marker


def play(rules: RuleSet, data: st.DataObject, stop_at: int | None = None) -> tuple[Round, Any]:
    """Play a random round; with ``stop_at``, return after that many steps (result None)."""
    shoe = data.draw(st.lists(st.sampled_from(DECK), min_size=80, max_size=80))
    cards = iter(shoe)
    rnd = Round(rules)
    if rnd.next_card().kind is CardFor.BURN:
        assert rnd.deal(next(cards)).kind is CardFor.BURN
    rnd.open_betting()
    _place_wagers(rnd, data)
    rnd.close_betting()
    steps = 0
    while rnd.phase is not Phase.COMPLETE:
        steps += 1
        assert steps < 400
        if stop_at is not None and steps > stop_at:
            return rnd, None
        decision = rnd.pending_decision()
        due = rnd.next_card()
        if decision is not None:
            assert due.kind is CardFor.NONE
            with pytest.raises(CardNotDueError):
                rnd.deal(Card("2", "C"))
            if decision.kind == "insurance":
                for seat in decision.surrender_seats:
                    if data.draw(st.booleans()):
                        rnd.early_surrender(seat, data.draw(st.booleans()), player=f"p{seat}-0")
                pending = rnd.pending_decision()
                players = pending.insurance_players if pending is not None else ()
                for seat, player in players:
                    if rnd.phase is Phase.INSURANCE and data.draw(st.booleans()):
                        rnd.insurance(player, data.draw(st.booleans()), seat)
                if rnd.phase is Phase.INSURANCE:
                    rnd.timeout()
                continue
            assert decision.seat is not None
            box = rnd.boxes[decision.seat]
            if data.draw(st.integers(0, 4)) == 0:
                rnd.timeout()
            elif box.mode is BoxMode.MAJORITY:
                marker = (decision.seat, decision.hand, len(box.hands[decision.hand or 0].actions))

                # Only those with money on the hand vote on it (after a split, logic 5).
                for w in [w for w in box.seat_wagers if w.player in decision.voters]:
                    if (
                        not _still_open(rnd, box, marker)
                        or w.player in box.votes
                        or not data.draw(st.booleans())
                    ):
                        continue
                    rnd.vote(decision.seat, w.player, data.draw(st.sampled_from(decision.legal)))
                if _still_open(rnd, box, marker):
                    rnd.timeout()
            else:
                action = data.draw(st.sampled_from(decision.legal))
                rnd.act(decision.seat, action, player=f"p{decision.seat}-0")
            continue
        assert due.kind is not CardFor.NONE, f"stuck in {rnd.phase}"
        if due.kind is CardFor.SEAT_HAND:
            hand = rnd.boxes[due.seat].hands[due.hand]
            assert len(hand.cards) < 2 or hand.total < 21, "a hand of 21 or more draws"
        if due.kind is CardFor.DEALER_DRAW:
            assert dealer_must_draw(rnd.dealer_cards, rules.dealer.hits_soft_17)
        before = {"dealer": len(rnd.dealer_cards), "burned": len(rnd.burned)}
        accepted = rnd.deal(next(cards))
        assert accepted == due
        _check_card_target(rnd, due, before)
    assert rnd.next_card().kind is CardFor.NONE
    taken = _taken(rnd)
    result = rnd.settle()
    with pytest.raises(CardNotDueError):
        rnd.deal(Card("2", "C"))
    return rnd, (result, taken)


@pytest.mark.parametrize("name", sorted(RULESETS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_rounds_keep_the_invariants(name: str, data: st.DataObject) -> None:
    rules = RULESETS[name]
    rnd, (result, taken) = play(rules, data)
    # money is conserved: stakes in = payouts + house net, and stakes = what was taken
    assert result.stakes == taken
    assert result.stakes == result.payouts + result.house_net
    for wager in result.wagers:
        for line in wager.lines:
            assert line.payout >= 0
            assert line.payout == rules.quantize_payout(line.payout)
    # no hand over 21 kept drawing: only the last card can take a hand over 21
    for box in rnd.boxes.values():
        for hand in box.hands:
            assert total_and_soft(hand.cards[:-1])[0] <= 21 if hand.cards else True
            if rules.charlie_cards is not None:
                assert len(hand.cards) <= rules.charlie_cards
    # the dealer rule: every draw was forced, and the dealer stopped when allowed to
    dealer = rnd.dealer_cards
    for n in range(2, len(dealer)):
        assert dealer_must_draw(dealer[:n], rules.dealer.hits_soft_17)
    if rnd.any_live_hand() and len(dealer) >= 2 and not rnd.dealer_has_blackjack:
        assert not dealer_must_draw(dealer, rules.dealer.hits_soft_17)
    # the event log rebuilds the same round
    again = Round.replay(rules, rnd.events[:-1])
    assert again.settle().as_dict() == result.as_dict()


@pytest.mark.parametrize("name", ["clubhouse", "majority_eu"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), stop_at=st.integers(0, 25))
def test_cancel_at_any_point_refunds_what_was_taken_and_the_log_rebuilds_the_state(
    name: str, data: st.DataObject, stop_at: int
) -> None:
    rules = RULESETS[name]
    rnd, _ = play(rules, data, stop_at=stop_at)
    if rnd.phase is Phase.SETTLED:
        return
    again = Round.replay(rules, rnd.events)
    assert again.next_card() == rnd.next_card()
    assert again.pending_decision() == rnd.pending_decision()
    taken = _taken(rnd)
    result = rnd.cancel("manager void")
    assert result.stakes == taken == result.payouts and result.house_net == 0
    assert all(line.outcome == "refund" for w in result.wagers for line in w.lines)
