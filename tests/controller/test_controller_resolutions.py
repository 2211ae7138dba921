"""Manager resolutions and cross-check edge cases that move money (pure: no broker, no database).

Each test here failed before its fix: a round abandoned, cards moved to other boxes, money
settled with a card unaccounted for, one card dealt twice, a refused action that changed
state, a voided card that no longer counted against the shoe, the hole card streamed.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError
from studio.controller.table import Input, TableController


def deal(d: Driver, *cards: tuple[str, str]) -> None:
    """Deal each card through the shoe and show it to the camera in its zone."""
    for code, zone in cards:
        d.card(code)
        d.camera(code, zone)


def count_mismatch(d: Driver) -> None:
    """The shuffler reports a wrong count (for the deck it is shuffling now)."""
    event = {"event": "count_mismatch", "data": {"reason": "415 cards"}}
    d.feed("shuffler.event", {"device": "shuf", "seq": d.device("shuf"), "ts": d.ts(), **event})


def test_a_count_mismatch_accepted_mid_round_lets_the_round_finish_then_changes_the_shoe() -> None:
    # Up to logic 16 (from 17 it is the next shoe's count: test_controller_next_shoe_count.py).
    d = Driver(single_source=True)
    d.table.logic = 16
    start_round(d, 1)
    d.card("TH")
    count_mismatch(d)
    alert = d.alerts[-1]
    assert alert["code"] == "shuffler_count_mismatch" and d.table.paused
    d.manager(verb="resolve", alert_id=alert["alert_id"], resolution="accept", reason="replaced")
    assert d.table.phase == "dealing"
    for code in ["7C", "9D", "5S", "TS"]:  # the dealer's 12 draws a ten
        if code == "TS":
            d.decide(1, "stand", "c1")
        d.card(code)
    assert "round_settled" in d.types()
    assert d.table.phase == "shoe_change"  # the deck is out of play after the round
    d.tick(10)
    assert d.table.phase == "shoe_change"


def test_a_count_mismatch_between_rounds_changes_the_shoe_at_once() -> None:
    # Up to logic 16 (from 17 it is the next shoe's count: test_controller_next_shoe_count.py).
    d = Driver(single_source=True)
    d.table.logic = 16
    start_round(d, 1)
    for code in ["TH", "7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "settled"
    count_mismatch(d)
    d.manager(
        verb="resolve",
        alert_id=d.alerts[-1]["alert_id"],
        resolution="accept",
        reason="deck replaced",
    )
    assert d.table.phase == "shoe_change"


def test_voiding_a_card_that_later_cards_followed_is_refused_and_changes_nothing() -> None:
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"))
    d.camera("7C", "dealer")
    d.card("7D")  # the dealer's up card: the camera read another card
    deal(d, ("9D", "seat:1"))  # dealt before the mismatch is decided
    d.tick(3.5)
    mismatch = next(a for a in d.alerts if a["code"] == "card_mismatch")
    before = [(c.code, c.target) for c in d.table.cards]
    with pytest.raises(AlertError, match="card 3 \\(9D\\) was dealt as seat 1"):
        d.manager(
            verb="resolve", alert_id=mismatch["alert_id"], resolution="void", reason="misdealt"
        )
    assert [(c.code, c.target) for c in d.table.cards] == before
    assert d.table.alerts.get(mismatch["alert_id"]).open
    # Correcting the up card keeps every card where it lies.
    d.manager(
        verb="resolve",
        alert_id=mismatch["alert_id"],
        resolution="correct",
        card="7C",
        reason="camera right",
    )
    assert [c.code for c in d.table.cards] == ["TH", "7C", "9D"]
    snap = d.table.engine.snapshot() if d.table.engine else {}
    assert snap["boxes"][0]["hands"][0]["cards"] == ["TH", "9D"]


def test_voiding_the_last_card_lets_the_dealer_deal_that_target_again() -> None:
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"))
    d.camera("7C", "dealer")
    d.card("7D", serial="S-7D")
    d.tick(3.5)
    mismatch = next(a for a in d.alerts if a["code"] == "card_mismatch")
    dealt_before = d.table.shoe.cards_dealt
    d.manager(verb="resolve", alert_id=mismatch["alert_id"], resolution="void", reason="misdealt")
    assert [c.code for c in d.table.cards] == ["TH"]
    assert d.table.next_card() == {"kind": "dealer_up"}
    # The voided card did leave the shoe: it still counts, and its serial is still known.
    assert d.table.shoe.cards_dealt == dealt_before
    assert "S-7D" in d.table.shoe.serials


def test_money_waits_for_a_card_the_camera_saw_but_the_shoe_never_scanned() -> None:
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1"))
    d.card("9S")  # the hole card, face down
    d.decide(1, "stand", "c1")
    d.camera("9S", "dealer")
    d.camera("5C", "dealer")  # the dealer drew 5C (21) and the shoe did not scan it
    deal(d, ("TC", "dealer"))  # the next scan: 16 + 10 busts in the engine
    assert "round_settled" not in d.types()
    assert d.table.prompt().action == "wait_camera"
    d.tick(3.5)
    assert "round_settled" not in d.types()
    assert [a["code"] for a in d.alerts] == ["misscan"]
    assert "5C" in d.alerts[-1]["message"] and d.table.paused


def test_a_card_held_by_both_the_shoe_and_the_camera_is_dealt_once() -> None:
    d = Driver()
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")  # drawn while paused: the shoe's read is held
    d.camera("TH", "seat:1")
    d.tick(3.5)  # the camera's sighting has no scan to pair with: held too
    shoe_held = next(a for a in d.alerts if a["code"] == "unexpected_card")["alert_id"]
    camera_held = next(a for a in d.alerts if a["code"] == "misscan")["alert_id"]
    d.manager(verb="resume", reason="check done")
    d.manager(verb="resolve", alert_id=shoe_held, resolution="accept", reason="shoe read it")
    with pytest.raises(AlertError, match="already dealt"):
        d.manager(verb="resolve", alert_id=camera_held, resolution="accept", reason="camera")
    dealt = d.table.shoe.cards_dealt
    d.manager(verb="resolve", alert_id=camera_held, resolution="void", reason="same card")
    assert [c.code for c in d.table.cards] == ["TH"]
    assert d.table.shoe.cards_dealt == dealt  # counted once


def test_a_refused_correction_changes_nothing_and_replays_the_same() -> None:
    d = Driver(single_source=True)
    logged: list[Input] = []
    handle = d.table.handle

    def logging_handle(inp: Input) -> Any:
        out = handle(inp)  # like the service: an input that raised is not logged
        logged.append(inp)
        return out

    d.table.handle = logging_handle  # type: ignore[method-assign]
    start_round(d, 1)
    d.card("TH", serial="X1")
    d.card("7C", serial="X1")  # a repeated serial: held as impossible
    alert_id = d.alerts[-1]["alert_id"]
    d.manager(verb="pause", reason="look")
    # Paused by hand: refused, saying so (it said "resolve the other open alerts first").
    with pytest.raises(AlertError, match="cannot accept 9C now: the table is paused; resume it"):
        d.manager(
            verb="resolve", alert_id=alert_id, resolution="correct", card="9C", reason="a typo"
        )
    assert d.table.alerts.get(alert_id).subject["held"]["card"] == "7C"
    d.manager(verb="resume", reason="go on")
    d.manager(verb="resolve", alert_id=alert_id, resolution="void", reason="remove it")
    live = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]["discarded"]
    fresh = TableController(d.table.settings, d.table.ruleset, round_gap=1.0)
    replayed = None
    for inp in logged:
        for out in fresh.handle(inp):
            body = out.payload.model_dump(mode="json")
            if body.get("type") == "manager_action" and "discarded" in body["data"]:
                replayed = body["data"]["discarded"]
    assert live == replayed == "7C"


def test_the_hole_card_is_published_only_when_the_dealer_turns_it() -> None:
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1"))
    d.card("5S")  # the hole card, face down
    hole = [e for e in d.events if e["type"] == "card_dealt"][-1]["data"]
    assert hole["card"] == "??" and hole["face_down"] is True
    assert [c.source for c in d.table.face_down_cards()] == [
        {"device": "shoe", "seq": hole["source"]["seq"], "ts": hole["source"]["ts"]}
    ]
    d.manager(verb="pause", reason="look")  # a manager action's before/after hides it too
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["before"]["cards"][-1] == action["after"]["cards"][-1] == "??"
    d.manager(verb="resume", reason="go on")
    assert "5S" not in str([e for e in d.events])
    d.decide(1, "stand", "c1")
    revealed = [e for e in d.events if e["type"] == "hole_card_revealed"]
    assert [r["data"] for r in revealed] == [{"card": "5S", "index": 4}]
    assert d.table.face_down_cards() == []


def test_a_dealer_blackjack_peeked_shows_the_hole_card_at_once() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["9H", "TC", "7D", "AS"]:  # ten up, ace in the hole: the dealer peeks
        d.card(code)
    dealt = [e["data"]["card"] for e in d.events if e["type"] == "card_dealt"]
    assert dealt == ["9H", "TC", "7D", "AS"]
    assert "hole_card_revealed" not in d.types()
    assert "round_settled" in d.types()


def test_a_european_table_has_no_face_down_card() -> None:
    eu = {"preset": "majority_speed", "dealer": {"hole_card": "eu", "peek": "none"}}
    d = Driver(eu, single_source=True)
    start_round(d, 1)
    d.card("TH")
    d.card("7C")
    d.card("9D")
    assert all(e["data"]["card"] != "??" for e in d.events if e["type"] == "card_dealt")
    assert d.table.face_down_cards() == []


def test_an_alert_holding_the_hole_card_conceals_it_from_readers() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["TH", "7C", "9D"]:
        d.card(code)
    d.manager(verb="pause", reason="look")
    d.card("5S", serial="H-5S")  # drawn while paused; it is due as the face-down hole card
    alert_id = d.alerts[-1]["alert_id"]
    alert = d.table.alerts.get(alert_id)
    assert alert.subject["held"]["card"] == "5S"  # the controller itself knows it
    assert d.table.conceals(alert)
    published = str(d.alerts) + str(d.events)
    assert "5S" not in published and "H-5S" not in published
    assert d.alerts[-1]["message"] == "?? drawn while the round is paused"
    d.manager(verb="resume", reason="go on")
    d.manager(verb="resolve", alert_id=alert_id, resolution="accept", reason="the hole card")
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["applied"] == "??"
    assert [e["data"]["card"] for e in d.events if e["type"] == "card_dealt"][-1] == "??"
    assert "5S" not in str(d.alerts) + str(d.events)
    d.decide(1, "stand", "c1")  # the dealer turns it over: nothing is secret any more
    assert not d.table.conceals(alert)
    assert [e["data"]["card"] for e in d.events if e["type"] == "hole_card_revealed"] == ["5S"]


def impossible_hole_card() -> tuple[Driver, str]:
    """Seven boxes, the dealer's up card, seven boxes: eight 4H among them, all an
    eight-deck shoe holds; then a ninth 4H, at the hole: held as impossible."""
    d = Driver(single_source=True)
    start_round(d, *range(1, 8))
    for code in ["4H"] * 8 + ["9D"] * 7:
        d.card(code)
    d.card("4H")
    return d, d.alerts[-1]["alert_id"]


def test_a_correction_of_a_held_hole_card_conceals_the_card_it_names() -> None:
    d, alert_id = impossible_hole_card()
    assert d.alerts[-1]["code"] == "impossible_card"
    assert "4H" not in str(d.alerts[-1])
    d.manager(verb="resolve", alert_id=alert_id, resolution="correct", card="6S", reason="misread")
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["card"] == action["applied"] == "??"
    assert d.alerts[-1]["resolution"]["card"] == "??"
    assert "6S" not in str(d.alerts) + str(d.events)
    for seat in range(1, 8):
        d.decide(seat, "stand", f"c{seat}", player="p1" if seat == 1 else f"p{seat}")
    assert [e["data"]["card"] for e in d.events if e["type"] == "hole_card_revealed"] == ["6S"]


def shoe_reads_of(alerts: list[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    """Evidence items in which the shoe's read of ``code`` is published."""
    return [
        item
        for a in alerts
        for item in a["evidence"]
        if item.get("source") == "shoe" and item.get("card") == code
    ]


def test_a_camera_sighting_is_never_paired_with_the_face_down_hole_card() -> None:
    d = Driver()
    start_round(d, 1)
    deal(d, ("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1"))
    d.card("5S")  # the hole card, face down: the camera sees its back
    d.camera("8H", "dealer")  # another card seen in the dealer's zone (a misread, a stray)
    d.camera("5S", "seat:1")  # a card seen on seat 1 that the shoe never scanned there
    d.tick(3.5)
    # Logic 13: the sighting in the dealer's zone waits for the card to be turned over, and
    # the one on seat 1 is an unscanned card whose alert conceals what the camera saw. Up to
    # logic 12 both were misscans naming their cards ("card 5S on seat:1 ...": a camera
    # that saw the hole card's face told it); before that one was a card_mismatch ("shoe
    # read 5S, camera saw 8H in dealer") and the other a wrong_box ("5S was due in dealer
    # but landed in seat:1"): each told every reader the face-down card.
    assert [a["code"] for a in d.alerts] == ["misscan"]
    assert d.alerts[0]["message"] == "card ?? on seat:1 was not scanned by the shoe"
    assert "5S" not in str(d.alerts) + str(d.events)
    assert d.table.face_down_cards() != []  # still face down, still unconfirmed
    stray = d.alerts[0]["alert_id"]
    d.manager(verb="resolve", alert_id=stray, resolution="void", reason="a stray card")
    d.decide(1, "stand", "c1")  # turned over: now it is compared, and named
    assert [e["data"]["card"] for e in d.events if e["type"] == "hole_card_revealed"] == ["5S"]
    d.tick(3.5)  # once the camera has had its window to read the card turned over
    assert "shoe read 5S, camera saw 8H in dealer" in str(d.alerts)


def test_a_card_held_while_paused_that_becomes_the_hole_card_is_concealed() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")
    d.card("7C")
    d.manager(verb="pause", reason="look")
    d.card("9D")  # drawn while paused: due to seat 1
    d.card("5S", serial="H-5S")  # drawn while paused too: it will be the hole card
    first, second = (a["alert_id"] for a in d.alerts[-2:])
    d.manager(verb="resume", reason="go on")
    d.manager(verb="resolve", alert_id=first, resolution="accept", reason="seat 1's card")
    d.manager(verb="resolve", alert_id=second, resolution="accept", reason="the hole card")
    dealt = [e["data"]["card"] for e in d.events if e["type"] == "card_dealt"]
    assert dealt == ["TH", "7C", "9D", "??"]
    published = str(d.alerts) + str(d.events)
    assert "5S" not in published and "H-5S" not in published
    d.decide(1, "stand", "c1")
    assert [e["data"]["card"] for e in d.events if e["type"] == "hole_card_revealed"] == ["5S"]


@pytest.mark.parametrize(("typed", "applied"), [("6s", "6S"), ("6S ", "6S"), ("10s", "TS")])
def test_a_correction_typed_in_another_spelling_still_conceals_the_hole_card(
    typed: str, applied: str
) -> None:
    d, alert_id = impossible_hole_card()
    d.manager(verb="resolve", alert_id=alert_id, resolution="correct", card=typed, reason="misread")
    assert [c.code for c in d.table.cards][-1] == applied
    # Before, only the spelling typed was concealed: the card applied went out as dealt.
    assert applied not in str(d.alerts) + str(d.events)
    assert typed.strip() not in str(d.alerts) + str(d.events)


def test_the_seated_player_declines_early_surrender_without_waiting_for_the_timer() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["TH", "AC", "6D", "9S"]:  # player T,6 against the dealer's ace: offer open
        d.card(code)
    pending = d.table.engine.pending()
    assert pending is not None and pending["surrender_seats"] == [1]

    def command(cid: str, kind: str, player: str = "p1") -> None:
        d.feed(
            "game.command", {"id": cid, "type": kind, "seat": 1, "player": player, "take": False}
        )

    command("s0", "early_surrender", player="p9")  # only the seated player answers
    assert "not the player at seat 1" in d.rejected("s0")
    command("i1", "insurance")
    command("s1", "early_surrender")
    # Both declined: the round goes on to the player's turn at once, not after a timer.
    pending = d.table.engine.pending()
    assert pending is not None and (pending["kind"], pending["seat"]) == ("action", 1)
    assert not d.table.engine.round.boxes[1].hands[0].surrendered


def test_a_card_held_for_a_repeated_serial_can_be_corrected() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH", serial="X1")
    d.card("7C", serial="X1")  # the shoe read a serial already dealt: held as impossible
    alert_id = d.alerts[-1]["alert_id"]
    assert "correct" in d.alerts[-1]["allowed_resolutions"]
    # The manager looks at the card and names it: the serial read with it was wrong.
    d.manager(verb="resolve", alert_id=alert_id, resolution="correct", card="7C", reason="misread")
    assert [e["data"]["card"] for e in d.events if e["type"] == "card_dealt"] == ["TH", "7C"]
    # Before, the repeated serial was kept and refused every correction the alert offered.
    assert d.table.shoe.serials == {"X1"}


def test_a_resolutions_time_is_written_as_every_contract_time() -> None:
    # An integrator's walk-through: `resolution.at` was "2026-12-05T10:22:34.490900+00:00"
    # where protocol.md promises RFC 3339 UTC with milliseconds, as every other time.
    d, alert_id = impossible_hole_card()
    d.manager(verb="resolve", alert_id=alert_id, resolution="void", reason="misdealt")
    [resolved] = [a for a in d.alerts if a["alert_id"] == alert_id and a["resolution"]]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", resolved["resolution"]["at"])
