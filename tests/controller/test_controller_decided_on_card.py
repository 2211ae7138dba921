"""A correction does not replay a player's decisions on cards they were never shown (table
logic 21).

A review (manager's console, finding 1): the shoe read 3H for seat 1, the camera saw 9S
there 0.6 s later, but a ``card_mismatch`` is raised only when the card's window ends, so
the round played on: seat 1 hit on 3H 2C (5), and again on 3H 2C 6D (11), drawing KC: 21
against the dealer's 19. The manager then corrected 3H to 9S, and the rebuilt round
replayed both hits on the new cards: a hit on 17, bust with 27, the player settled -10.00
for a decision never made on those cards (+10.00 as played). Up to logic 20 a correction
was refused only when a later event became impossible; now it is refused too when a
decision a player (or their decision timer) took after the card was taken on another hand
than the correction makes it (its cards' values, the legal actions, the dealer's up card):
"cancel the round instead". The automatic play of a Best Strategy box is re-derived as
before (``test_controller_money_added.py``,
``test_a_correction_that_changes_an_automatic_double_says_so``).
"""

from __future__ import annotations

from typing import Any

import pytest
from logic17_support import Recorder, open_round

from studio.controller.alerts import AlertError
from studio.controller.table import LOGIC

WINDOW = 3.0
DECIDED_ON = "decided on the card as read"


def _mismatch(d: Recorder) -> str:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == "card_mismatch"]
    return alert.alert_id


def _settled(d: Recorder) -> dict[str, Any]:
    settled = next(e for e in d.events if e["type"] == "round_settled")
    box: dict[str, Any] = settled["data"]["result"]["boxes"][0]
    return box


def deal_3h_seen_as_9s(d: Recorder) -> None:
    """The reviewers' deal: seat 1 bets, its first card 3H is seen by the camera as 9S, the
    other three cards seen as dealt (the dealer's QS up, 9C in the hole: 19)."""
    open_round(d, 1)
    d.card("3H")
    d.camera("9S", "seat:1")  # 0.1 s later: the camera disagrees
    d.card("QS")
    d.camera("QS", "dealer")
    d.card("2C")
    d.camera("2C", "seat:1")
    d.card("9C")  # the hole card, face down


def _hit_twice_on_a_misread_card(logic: int = LOGIC) -> Recorder:
    """The reviewer's round: seat 1's 3H seen as 9S; seat 1 hits twice before the alert."""
    d = Recorder(logic=logic)
    deal_3h_seen_as_9s(d)
    d.decide(1, "hit", "h1")  # on 3H 2C: 5
    d.card("6D")
    d.camera("6D", "seat:1")
    d.decide(1, "hit", "h2")  # on 3H 2C 6D: 11
    d.card("KC")  # 21: the dealer's turn, 19 stands
    d.camera("KC", "seat:1")
    d.camera("9C", "dealer")
    assert d.table.alerts.open_alerts() == []  # the window of 3H has not ended
    d.tick(WINDOW + 0.5)
    return d


def test_a_correction_under_a_players_decisions_is_refused() -> None:
    d = _hit_twice_on_a_misread_card()
    mismatch = _mismatch(d)
    with pytest.raises(AlertError, match=DECIDED_ON) as refused:
        d.resolve(mismatch, "correct", card="9S")
    message = str(refused.value)
    assert message.startswith("a player decided on the card as read: cancel the round instead")
    assert "seat 1 hit on 3H 2C against QS, now 9S 2C;" in message
    assert [c.code for c in d.table.cards] == ["3H", "QS", "2C", "9C", "6D", "KC"]
    assert d.table.paused and "round_settled" not in d.types()
    d.resolve(mismatch, "cancel")  # the round is cancelled: every bet refunded
    cancelled = next(e for e in d.events if e["type"] == "round_cancelled")
    assert cancelled["data"]["refunds"]["totals"]["stakes"] == "10.00"


def test_up_to_logic_20_the_decisions_were_replayed_on_the_corrected_card() -> None:
    d = _hit_twice_on_a_misread_card(logic=20)
    d.resolve(_mismatch(d), "correct", card="9S")
    d.tick(2)
    box = _settled(d)
    hand = box["hands"][0]
    assert hand["cards"] == ["9S", "2C", "6D", "KC"] and hand["actions"] == ["hit", "hit"]
    assert box["wagers"][0]["net"] == "-10.00"  # bust with 27: 21 as played
    assert d.replayed() == d.outputs  # a log of logic 20 replays as it was played


@pytest.mark.parametrize("logic", [21, LOGIC])
def test_a_refused_correction_is_not_logged_and_the_log_replays(logic: int) -> None:
    # From logic 21 (a re-review: 101a543 had moved the check to 22 by mistake).
    d = _hit_twice_on_a_misread_card(logic=logic)
    with pytest.raises(AlertError, match=DECIDED_ON):
        d.resolve(_mismatch(d), "correct", card="9S")
    d.resolve(_mismatch(d), "accept")  # the manager takes the shoe's read after all
    d.tick(2)
    assert _settled(d)["wagers"][0]["net"] == "10.00"  # 21 against 19
    assert d.replayed() == d.outputs


def test_a_decision_timer_that_ran_out_on_the_card_as_read_counts_too() -> None:
    """Nobody acted on 3H 2C (5): the timer stood the hand. Corrected, that is a stand on
    11 the player never had the chance to hit or double."""
    d = Recorder(camera_window_seconds=20.0)
    deal_3h_seen_as_9s(d)
    d.tick(15.5)  # the decision timer: stand
    assert "timeout_default" in d.types()
    d.camera("9C", "dealer")
    d.tick(5)
    with pytest.raises(AlertError, match="seat 1 let the decision time out on 3H 2C"):
        d.resolve(_mismatch(d), "correct", card="9S")


def test_the_dealer_s_up_card_under_any_players_decision_is_refused() -> None:
    """Every player decides against the up card: seat 1 stood on 17 against a 5 (the shoe's
    read); the camera saw 6H. Seat 1's own cards are unchanged, the up card is not."""
    d = Recorder()
    open_round(d, 1, 2)
    for code, zone in [("TH", "seat:1"), ("9D", "seat:2"), ("5H", "dealer"),
                       ("7C", "seat:1"), ("8C", "seat:2")]:  # fmt: skip
        d.card(code)
        d.camera("6H" if code == "5H" else code, zone)
    d.card("4S")  # the hole card
    d.decide(1, "stand", "s1")
    d.tick(WINDOW + 0.5)
    with pytest.raises(AlertError, match="seat 1 stood on TH 7C against 5H, now against 6H;"):
        d.resolve(_mismatch(d), "correct", card="6H")
    assert d.table.engine is not None and d.table.engine.round.dealer_up is not None
    assert d.table.engine.round.dealer_up.code == "5H"


def test_the_up_card_corrected_before_any_decision_is_taken() -> None:
    d = Recorder()
    open_round(d, 1, 2)
    for code, zone in [("TH", "seat:1"), ("9D", "seat:2"), ("5H", "dealer"),
                       ("7C", "seat:1"), ("8C", "seat:2")]:  # fmt: skip
        d.card(code)
        d.camera("6H" if code == "5H" else code, zone)
    d.card("4S")
    d.tick(WINDOW + 0.5)  # the alert pauses the table: nobody has decided yet
    d.resolve(_mismatch(d), "correct", card="6H")
    assert d.table.engine is not None and d.table.engine.round.dealer_up is not None
    assert d.table.engine.round.dealer_up.code == "6H"
    assert (d.table.engine.pending() or {}).get("seat") == 1
    assert d.replayed() == d.outputs


def test_another_seats_decision_does_not_stop_the_correction() -> None:
    """Seat 1 stood on its own 19 against a 7 before seat 2's first card was corrected: that
    decision saw neither card, and stands; seat 2 decides on its corrected hand."""
    d = Recorder()
    open_round(d, 1, 2)
    for code, seen, zone in [("TH", "TH", "seat:1"), ("3H", "9S", "seat:2"),
                             ("7S", "7S", "dealer"), ("9C", "9C", "seat:1"),
                             ("2C", "2C", "seat:2")]:  # fmt: skip
        d.card(code)
        d.camera(seen, zone)
    d.card("8D")  # the hole card
    d.decide(1, "stand", "s1")
    d.tick(WINDOW + 0.5)
    d.resolve(_mismatch(d), "correct", card="9S")
    assert d.table.engine is not None
    boxes = d.table.engine.round.boxes
    assert [c.code for c in boxes[2].hands[0].cards] == ["9S", "2C"]
    assert boxes[1].hands[0].actions == ["stand"]
    assert (d.table.engine.pending() or {}).get("seat") == 2
    assert d.replayed() == d.outputs


def test_a_correction_of_the_suit_alone_keeps_the_decisions() -> None:
    """3H read, 3S seen: the player hit on a 3 either way (no decision turns on a suit)."""
    d = Recorder()
    open_round(d, 1)
    for code, seen, zone in [("3H", "3S", "seat:1"), ("QS", "QS", "dealer"),
                             ("2C", "2C", "seat:1")]:  # fmt: skip
        d.card(code)
        d.camera(seen, zone)
    d.card("9C")
    d.decide(1, "hit", "h1")
    d.card("6D")
    d.camera("6D", "seat:1")
    d.tick(WINDOW + 0.5)
    d.resolve(_mismatch(d), "correct", card="3S")
    assert d.table.engine is not None
    hand = d.table.engine.round.boxes[1].hands[0]
    assert [c.code for c in hand.cards] == ["3S", "2C", "6D"] and hand.actions == ["hit"]
    assert d.replayed() == d.outputs


@pytest.mark.parametrize("logic", [20, LOGIC])
def test_an_early_surrender_answer_was_taken_on_the_hand_as_read(logic: int) -> None:
    """Against the dealer's ace seat 1 surrendered TS 6H (16, the shoe's read); the camera
    saw 9H. Up to logic 20 the correction made it a surrender of 19."""
    d = Recorder(logic=logic)
    open_round(d, 1)
    for code, zone in [("TS", "seat:1"), ("AH", "dealer"), ("6H", "seat:1")]:
        d.card(code)
        d.camera("9H" if code == "6H" else code, zone)
    d.card("7C")  # the hole card
    d.feed("game.command", {"id": "es", "type": "early_surrender", "seat": 1, "player": "p1",
                            "take": True})  # fmt: skip
    d.camera("7C", "dealer")  # turned over: the hand surrendered, the round is over
    d.tick(WINDOW + 0.5)
    mismatch = _mismatch(d)
    if logic < LOGIC:
        d.resolve(mismatch, "correct", card="9H")
        assert d.table.engine is not None
        hand = d.table.engine.round.boxes[1].hands[0]
        assert [c.code for c in hand.cards] == ["TS", "9H"] and hand.actions == ["surrender"]
        return
    with pytest.raises(
        AlertError, match="seat 1 took early surrender on TS 6H against AH, now TS 9H;"
    ):
        d.resolve(mismatch, "correct", card="9H")


def test_a_majority_rules_vote_was_taken_on_the_hand_as_read() -> None:
    """Two players on one box vote: each vote is a decision on the hand as read."""
    d = Recorder("majority_speed")
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.bet(1, "p2")
    d.tick(40)
    for code, zone in [("3H", "seat:1"), ("QS", "dealer"), ("2C", "seat:1")]:
        d.card(code)
        d.camera("9S" if code == "3H" else code, zone)
    d.card("9C")  # the hole card
    for player in ("p1", "p2"):
        d.feed("game.command", {"id": f"v-{player}", "type": "vote", "seat": 1,
                                "player": player, "action": "hit"})  # fmt: skip
    d.tick(WINDOW + 0.5)
    with pytest.raises(AlertError, match="seat 1 voted hit on 3H 2C against QS, now 9S 2C;"):
        d.resolve(_mismatch(d), "correct", card="9S")
    assert d.replayed() == d.outputs
