"""A decision timeout replayed by a rebuild (a correction or a void) applies only to the decision
it defaulted (logic 17).

A review: under majority_speed, EU (no hole card), with the camera's window (20 s) longer than
the decision timer (15 s), the insurance question timed out first (declined); the up card AH
was then corrected to TH. No insurance was ever asked with a ten up, but the rebuild replayed
the timeout on what was pending then, seat 1's action: "hit (timeout, no votes, best
strategy)", and the two players who had not yet been asked lost their decision. From logic 17
a timeout names the decision it defaulted; a rebuild where that decision is not the one
pending drops it, and the decision pending has its full timer.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from logic17_support import Recorder

MAJORITY_EU = {"preset": "majority_speed", "dealer": {"hole_card": "eu", "peek": "none"}}


def _insurance_timed_out_then_up_card_misread(logic: int = 17) -> Recorder:
    d = Recorder(MAJORITY_EU, logic=logic, camera_window_seconds=20.0)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.bet(1, "p2")  # two players on one box: Majority Rules
    d.tick(40)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.camera("TH", "dealer")
    d.card("AH")  # the shoe reads the up card AH, the camera TH
    d.card("6D")
    d.camera("6D", "seat:1")
    assert d.table.engine is not None
    assert (d.table.engine.pending() or {})["kind"] == "insurance"
    d.tick(15.5)  # the insurance timer runs out: declined by default
    assert "timeout_default" in d.types()
    d.tick(5)  # the up card's window ends
    [mismatch] = [a for a in d.raised() if a["code"] == "card_mismatch"]
    d.resolve(mismatch["alert_id"], "correct", card="TH")
    return d


def _seat_hand(d: Recorder) -> Any:
    assert d.table.engine is not None
    return d.table.engine.round.boxes[1].hands[0]


def test_a_timeout_of_a_decision_the_correction_removed_is_dropped() -> None:
    d = _insurance_timed_out_then_up_card_misread()
    hand = _seat_hand(d)
    assert [c.code for c in hand.cards] == ["TS", "6D"]
    assert hand.actions == []  # up to 16: ["hit (timeout, no votes, best strategy)"]
    assert d.table.engine is not None
    pending = d.table.engine.pending()
    assert pending is not None and (pending["kind"], pending["seat"]) == ("action", 1)
    assert not any(op[0] == "timeout" for op in d.table.ops)
    # The players' decision has its own full timer from the correction.
    assert d.table.decision_deadline == d.now + timedelta(seconds=15)
    d.feed(
        "game.command",
        {"id": "v1", "type": "vote", "seat": 1, "player": "p1", "action": "stand"},
    )
    d.feed(
        "game.command",
        {"id": "v2", "type": "vote", "seat": 1, "player": "p2", "action": "stand"},
    )
    assert "stand" in " ".join(_seat_hand(d).actions)
    d.tick(14)
    assert d.replayed() == d.outputs


def test_a_logic_16_log_replays_the_timeout_as_it_was_played() -> None:
    d = _insurance_timed_out_then_up_card_misread(logic=16)
    assert _seat_hand(d).actions == ["hit (timeout, no votes, best strategy)"]
    assert d.replayed() == d.outputs


def test_a_timeout_of_the_decision_still_pending_is_kept() -> None:
    # clubhouse: the decision timer (15 s) ends before the seat card's window (20 s); the
    # seat's second card 8D (the camera read KH) is corrected: the same decision pending,
    # defaulted (stand). Logic 20: from logic 21 a correction under a decision its timer
    # defaulted on the card as read is refused (test_controller_decided_on_card.py).
    d = Recorder("clubhouse", logic=20, camera_window_seconds=20.0)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(40)
    for code, zone in [("TS", "seat:1"), ("7C", "dealer")]:
        d.card(code)
        d.camera(code, zone)
    d.card("8D")  # seat 1's second card: the camera reads it as KH
    d.card("9H")  # the hole card, face down
    d.camera("KH", "seat:1")
    d.tick(15.5)
    assert "timeout_default" in d.types()
    d.tick(5)
    [mismatch] = [a for a in d.raised() if a["code"] == "card_mismatch"]
    d.resolve(mismatch["alert_id"], "correct", card="KH")
    hand = _seat_hand(d)
    assert [c.code for c in hand.cards] == ["TS", "KH"]
    assert hand.stood and any(op[0] == "timeout" for op in d.table.ops)
    assert d.replayed() == d.outputs
