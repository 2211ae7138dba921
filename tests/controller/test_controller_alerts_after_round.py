"""Alerts of a round that has ended, and manager actions that said more than they did
(table logic 14; pure, no I/O).

Two walk-throughs (a shift manager, a security review) found: a ``timeout`` alert, which
does not pause the table, outlived the alert it escalated and its round, and its
"cancel" then cancelled the round in progress, refunding it; the alerts of a round
cancelled through another alert could still void or correct "its" cards by index (the
cards of whatever round the table held) or deal a held card into the next round; an
accept showed the card typed in the console's card box, never dealt; "resume" said
"resumed" while alerts kept the table paused; a second acknowledgement replaced the
first one's name; a mid-round shoe change showed as the cut card seen; an EU table asked
for the dealer's "hole card", dealt face up after the players.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError


def _resolve(d: Driver, alert_id: str, resolution: str, **extra: Any) -> None:
    d.manager(verb="resolve", alert_id=alert_id, resolution=resolution, reason="test", **extra)


def _misread(d: Driver) -> str:
    d.device_event("shoe.event", "shoe", "misread")
    return d.table.alerts.open_alerts()[-1].alert_id


def _cancelled(d: Driver) -> list[str]:
    return [e["round_id"] for e in d.events if e["type"] == "round_cancelled"]


def test_a_timeout_alert_closes_with_the_alert_it_escalated_and_never_cancels_a_later_round() -> (
    None
):
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")
    misscan = _misread(d)
    d.tick(121)  # escalate_after
    (timeout,) = [a for a in d.table.alerts.open_alerts() if a.code.value == "timeout"]
    assert timeout.round_id == "bj-1-R1"
    _resolve(d, misscan, "accept")
    assert timeout.state == "resolved"
    assert timeout.resolution is not None
    assert timeout.resolution["reason"] == f"{misscan} resolved"
    for code in ["7C", "9D", "5S"]:
        d.card(code)
    d.decide(1, "stand", "s1")
    d.card("KD")
    d.tick(1.5)
    start_bets = d.table.round_id
    assert start_bets == "bj-1-R2"
    d.bet(1, "p1", cid="r2")
    with pytest.raises(AlertError, match="already resolved"):
        _resolve(d, timeout.alert_id, "cancel")
    assert _cancelled(d) == []
    assert d.table.phase == "betting"


def _mismatched_twice() -> Driver:
    """Seat 1's TH and the dealer's 7C each read by the camera as another card: two
    card_mismatch alerts about dealt cards (by index); the first one's cancel cancels R1."""
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.camera("TD", "seat:1")
    d.card("7C")
    d.camera("7S", "dealer")
    d.tick(3.5)
    first, second = d.table.alerts.open_alerts()
    assert (first.code.value, second.code.value) == ("card_mismatch", "card_mismatch")
    _resolve(d, first.alert_id, "cancel")
    assert _cancelled(d) == ["bj-1-R1"]
    return d


def test_an_alert_of_a_cancelled_round_changes_none_of_its_cards_and_cancels_nothing() -> None:
    d = _mismatched_twice()
    (left,) = d.table.alerts.open_alerts()
    cards = [c.code for c in d.table.cards]
    with pytest.raises(AlertError, match="round bj-1-R1 is over: its cards can no longer change"):
        _resolve(d, left.alert_id, "void")
    with pytest.raises(AlertError, match="round bj-1-R1 is over"):
        _resolve(d, left.alert_id, "correct", card="7S")
    assert [c.code for c in d.table.cards] == cards
    _resolve(d, left.alert_id, "cancel")  # closes it; nothing more is cancelled
    assert _cancelled(d) == ["bj-1-R1"]
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["round_over"] == "bj-1-R1"
    assert not d.table.paused


def test_a_card_held_by_an_alert_of_a_cancelled_round_is_not_dealt_into_the_next() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    misscan = _misread(d)
    d.card("TH")  # drawn while paused: held
    held = [a for a in d.table.alerts.open_alerts() if a.subject.get("held")]
    assert len(held) == 1
    d.manager(verb="cancel_round", reason="test")
    _resolve(d, misscan, "accept")
    with pytest.raises(AlertError, match="cannot be dealt into another round; void it"):
        _resolve(d, held[0].alert_id, "accept")
    _resolve(d, held[0].alert_id, "void")  # it left the shoe: in the census
    assert d.table.shoe.dealt["TH"] == 1


def test_only_a_correction_records_a_card() -> None:
    d = _mismatched_twice()
    (first,) = [a for a in d.table.alerts.all() if a.state == "resolved"]
    assert first.resolution is not None and first.resolution["card"] is None
    d = Driver(single_source=True)
    start_round(d, 1)
    misscan = _misread(d)
    _resolve(d, misscan, "accept", card="QS")  # the console sends its card box each time
    alert = d.table.alerts.get(misscan)
    assert alert.resolution is not None and alert.resolution["card"] is None
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["card"] is None


def test_resume_says_what_still_pauses_the_table() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    misscan = _misread(d)
    with pytest.raises(
        AlertError, match=f"not paused by a manager: open alerts pause it: {misscan}"
    ):
        d.manager(verb="resume", reason="test")
    d.manager(verb="pause", reason="test")
    d.manager(verb="resume", reason="test")
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["still_paused_by"] == [misscan]
    assert d.table.paused
    _resolve(d, misscan, "accept")
    with pytest.raises(AlertError, match="not paused by a manager: it is not paused"):
        d.manager(verb="resume", reason="test")


def test_a_second_acknowledgement_is_refused_and_keeps_the_first_name() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    misscan = _misread(d)
    d.feed("manager.action", {"user": "ann", "verb": "acknowledge", "alert_id": misscan})
    with pytest.raises(AlertError, match=f"alert {misscan} is already acknowledged by ann"):
        d.feed("manager.action", {"user": "bob", "verb": "acknowledge", "alert_id": misscan})
    assert d.table.alerts.get(misscan).acknowledged_by == "ann"


def test_a_shoe_change_asked_mid_round_is_not_the_cut_card() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.manager(verb="shoe_change", reason="worn cards")
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert (action["deferred"], action["after_round"]) == (True, "bj-1-R1")
    shoe = d.table.shoe.snapshot()
    assert (shoe["cut_card_seen"], shoe["change_requested_by"]) == (False, "boss")
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    d.decide(1, "stand", "s1")
    d.card("KD")
    due = [e["data"] for e in d.events if e["type"] == "shoe_change_due"]
    assert due == [{"cut_card": False, "requested_by": "boss"}]
    assert d.table.phase == "shoe_change"


@pytest.mark.parametrize(
    ("hole_card", "text", "face_down"),
    [("us", "Deal the dealer's hole card", True), ("eu", "Deal the dealer's second card", False)],
)
def test_the_dealer_s_second_card_is_a_hole_card_under_us_rules_only(
    hole_card: str, text: str, face_down: bool
) -> None:
    peek = "ace_and_ten" if hole_card == "us" else "none"
    rules = {"preset": "clubhouse", "dealer": {"hole_card": hole_card, "peek": peek}}
    d = Driver(rules, single_source=True)  # type: ignore[arg-type]
    start_round(d, 1)
    d.card("TH")
    d.card("7C")
    d.card("9D")
    if hole_card == "eu":
        d.decide(1, "stand", "s1")  # the EU dealer's second card comes after the players
    prompt = d.table.prompt()
    assert prompt.target is not None
    assert (prompt.text, prompt.target["kind"], prompt.target["face_down"]) == (
        text,
        "dealer_hole",
        face_down,
    )


def test_a_cut_card_out_after_a_manager_asked_for_the_change_is_seen() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")
    d.manager(verb="shoe_change", reason="worn cards")
    d.device_event("cutcard.event", "cut", "cut_card_detected")
    shoe = d.table.shoe.snapshot()
    assert (shoe["cut_card_seen"], shoe["change_requested_by"]) == (True, None)


def test_a_logic_13_shoe_change_replays_its_manager_action_as_logged() -> None:
    d = Driver(single_source=True)
    d.table.logic = 13
    start_round(d, 1)
    d.manager(verb="shoe_change", reason="worn cards")
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["deferred"] is True and "after_round" not in action
