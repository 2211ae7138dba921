"""A card only the camera saw (the shoe did not scan it), accepted by a manager (logic 4).

The camera's sighting is held by a `misscan` alert ("card 8S on seat:1 was not scanned by
the shoe"); accepting it deals the card. Up to logic 3 that dealt card then waited for a
camera sighting like a shoe read, though the camera's own sighting was what it was dealt
on: 3 s later a second `misscan` ("camera did not see 8S in seat:1") paused the table
again. And the shoe's late read of that card was a second card: refused as impossible in a
one-deck shoe, dealt to the next box in eight decks. Now the dealt card is confirmed by the
camera at once, and a shoe read of the same code (the same serial when both carry one)
within the cross-check window after it was dealt is that card, logged as `late_shoe_read`.
"""

from __future__ import annotations

from typing import Any

from test_controller_table import Driver, start_round

from studio.controller.table import LOGIC

WINDOW = 3.0  # the table's camera_window_seconds (the default)


def _accepted_camera_card(logic: int = LOGIC, decks: int = 8) -> Driver:
    """Seat 1's first card seen by the camera alone, its misscan accepted: 8S dealt."""
    d = Driver(ruleset={"preset": "clubhouse", "shoe": {"decks": decks}})
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    d.shuffle(decks=decks)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(20)
    assert d.table.phase == "dealing"
    d.camera("8S", "seat:1")  # the shoe never scanned it (or its read is late)
    d.tick(WINDOW + 0.5)
    (held,) = d.table.alerts.open_alerts()
    assert held.message == "card 8S on seat:1 was not scanned by the shoe"
    d.manager(verb="resolve", alert_id=held.alert_id, resolution="accept", reason="seen on video")
    assert [c.code for c in d.table.cards] == ["8S"] and not d.table.paused
    return d


def _raised(d: Driver) -> list[str]:
    return [a["message"] for a in d.alerts if a["state"] == "raised"]


def _late_reads(d: Driver) -> list[dict[str, Any]]:
    return [e["data"] for e in d.events if e["type"] == "late_shoe_read"]


def test_a_card_dealt_on_the_cameras_sighting_waits_for_no_other_sighting() -> None:
    d = _accepted_camera_card()
    assert not d.table.crosscheck.undecided()
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed == [{"index": 1, "camera": "accepted_sighting"}]
    d.tick(WINDOW + 0.5)  # before: "camera did not see 8S in seat:1", paused again
    assert _raised(d) == ["card 8S on seat:1 was not scanned by the shoe"]
    assert not d.table.paused


def test_the_round_plays_on_and_settles_after_the_accepted_camera_card() -> None:
    d = _accepted_camera_card()
    for code, zone in [("7C", "dealer"), ("9D", "seat:1")]:
        d.card(code)
        d.camera(code, zone)
    d.card("5S")  # the hole card
    d.decide(1, "stand", "stand-1")
    d.camera("5S", "dealer")  # turned over: 12, the dealer draws
    d.card("KD")
    d.camera("KD", "dealer")
    d.tick(WINDOW + 0.5)
    settled = next(e["data"] for e in d.events if e["type"] == "round_settled")
    assert settled["result"]["boxes"][0]["wagers"][0]["net"] == "10.00"  # 17 against a bust
    assert _raised(d) == ["card 8S on seat:1 was not scanned by the shoe"]


def test_a_run_of_logic_3_replays_the_second_misscan_it_raised() -> None:
    d = _accepted_camera_card(logic=3)
    assert not [e for e in d.events if e["type"] == "card_confirmed"]
    d.tick(WINDOW + 0.5)
    assert _raised(d)[-1] == "camera did not see 8S in seat:1"
    assert d.table.paused


def test_the_shoes_late_read_of_the_accepted_card_is_that_card_in_eight_decks() -> None:
    d = _accepted_camera_card()
    d.tick(1.0)
    d.card("8S", serial="S-0042")  # the shoe's read of it, late
    # Not dealt to the dealer's up card (the next target), not a second card out.
    assert [c.code for c in d.table.cards] == ["8S"]
    assert d.table.next_card() == {"kind": "dealer_up"}
    assert d.table.shoe.dealt["8S"] == 1 and d.table.shoe.cards_out == 1
    assert _raised(d) == ["card 8S on seat:1 was not scanned by the shoe"]
    (late,) = _late_reads(d)
    (accepted,) = d.table.alerts.all()
    assert late["index"] == 1 and late["card"] == "8S" and late["serial"] == "S-0042"
    assert late["accepted"] == accepted.alert_id and late["source"]["device"] == "shoe"
    assert 1.0 <= late["late_seconds"] <= WINDOW
    # The read's serial is the dealt card's: a second read of it is impossible.
    assert d.table.cards[0].serial == "S-0042"
    d.card("8S", serial="S-0042")
    assert d.alerts[-1]["code"] == "impossible_card"


def test_the_shoes_late_read_in_a_one_deck_shoe_is_not_refused() -> None:
    d = _accepted_camera_card(decks=1)
    d.card("8S")  # before: "8S would be copy 2 in a 1-deck shoe"
    assert [c.code for c in d.table.cards] == ["8S"] and not d.table.paused
    assert len(_late_reads(d)) == 1 and d.table.shoe.cards_out == 1


def test_a_run_of_logic_3_replays_the_late_read_as_a_second_card() -> None:
    eight = _accepted_camera_card(logic=3)
    eight.card("8S")
    assert [c.code for c in eight.table.cards] == ["8S", "8S"]  # the dealer's up card
    assert eight.table.shoe.dealt["8S"] == 2 and eight.table.shoe.cards_out == 2
    one = _accepted_camera_card(logic=3, decks=1)
    one.card("8S")
    assert one.alerts[-1]["message"] == "impossible card: 8S would be copy 2 in a 1-deck shoe"
    assert not _late_reads(eight) and not _late_reads(one)


def test_a_read_after_the_window_or_of_another_card_is_a_new_card() -> None:
    # Up to logic 15: from 16 the accepted card is the late read's for its whole round, and
    # a new card of its code is told by the shoe's order (test_controller_late_shoe_read_round).
    late = _accepted_camera_card(logic=15)
    late.tick(WINDOW + 0.5)
    late.card("8S")  # the window after the accepted card is over: another 8S of 8 decks
    other = _accepted_camera_card()
    other.card("8C")
    for d, code in [(late, "8S"), (other, "8C")]:
        assert [c.code for c in d.table.cards] == ["8S", code]
        assert d.table.shoe.cards_out == 2 and not _late_reads(d)


def test_a_read_with_a_serial_already_dealt_is_not_the_accepted_card() -> None:
    d = Driver()
    start_round(d, 1, 2)
    d.card("8S", serial="S-1")
    d.camera("8S", "seat:1")
    d.camera("8S", "seat:2")  # another 8S the shoe did not scan
    d.tick(WINDOW + 0.5)
    (held,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=held.alert_id, resolution="accept", reason="on video")
    d.card("8S", serial="S-1")  # seat 1's serial again: impossible, not seat 2's card
    assert d.alerts[-1]["code"] == "impossible_card" and not _late_reads(d)


def _held_twice() -> Driver:
    """TH drawn while paused: the shoe's read held, then the camera's sighting of it."""
    d = Driver()
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")
    d.camera("TH", "seat:1")
    d.tick(WINDOW + 0.5)
    d.manager(verb="resume", reason="check done")
    return d


def _resolve(d: Driver, code: str, resolution: str) -> None:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == code]
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution=resolution, reason="test")


def test_the_shoes_hold_accepted_is_confirmed_by_the_cameras_held_sighting() -> None:
    """The mirror case: the shoe's read accepted, the camera's sighting of that card held by
    a `misscan`. Before, the dealt card waited for another sighting: a third alert."""
    for camera_hold in ("void", None):  # voided first, or left open until after the deal
        d = _held_twice()
        if camera_hold:
            _resolve(d, "misscan", camera_hold)
        _resolve(d, "unexpected_card", "accept")
        assert [c.code for c in d.table.cards] == ["TH"]
        d.tick(WINDOW + 0.5)  # before: "camera did not see TH in seat:1"
        assert [a.code.value for a in d.table.alerts.all()] == ["unexpected_card", "misscan"]
        assert not camera_hold or not d.table.paused
        d.card("TH")  # not the card dealt on the camera's sighting: a second TH of 8 decks
        assert not _late_reads(d)


def test_a_run_of_logic_3_replays_the_third_alert_of_a_card_held_twice() -> None:
    d = _held_twice()
    d.table.logic = 3
    _resolve(d, "misscan", "void")
    _resolve(d, "unexpected_card", "accept")
    d.tick(WINDOW + 0.5)
    assert _raised(d)[-1] == "camera did not see TH in seat:1"


# ---------------------------------------------------------------- seen in another zone (logic 5)


def _accepted_in_another_zone(logic: int = LOGIC) -> Driver:
    """The camera saw 8S on seat 2 while seat 1's first card was due; the shoe did not scan
    it. The manager's accept deals it to seat 1, where it is due."""
    d = Driver()
    d.table.logic = logic
    start_round(d, 1, 2)
    d.camera("8S", "seat:2")
    d.tick(WINDOW + 0.5)
    (held,) = d.table.alerts.open_alerts()
    assert held.message == "card 8S on seat:2 was not scanned by the shoe"
    d.manager(verb="resolve", alert_id=held.alert_id, resolution="accept", reason="on video")
    assert [(c.code, c.target["seat"]) for c in d.table.cards] == [("8S", 1)]
    return d


def test_a_card_accepted_from_another_zone_is_a_wrong_box_when_not_moved() -> None:
    """The camera did see the card, on seat 2: not "camera did not see 8S in seat:1" (a
    warning, as if the card were missing) but the card in the wrong box (critical). Up to
    logic 15: from 16 such an accept is refused (test_controller_resolved_card_sightings)."""
    d = _accepted_in_another_zone(15)
    d.tick(WINDOW + 0.5)
    assert _raised(d)[-1] == "8S was due in seat:1 but landed in seat:2"
    wrong = d.alerts[-1]
    assert wrong["code"] == "wrong_box" and wrong["severity"] == "critical"
    assert wrong["allowed_resolutions"] == ["accept", "void", "cancel"]
    camera = [e for e in wrong["evidence"] if e["source"] == "camera"]
    assert camera == [
        {
            "source": "camera",
            "card": "8S",
            "zone": "seat:2",
            "device": "cam",
            "seq": 1,
            "confidence": 0.99,
        }
    ]
    assert d.table.paused
    # Accepted, the card stands as dealt (seat 1's) and the round goes on.
    (alert,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution="accept", reason="moved it")
    assert not d.table.paused and d.table.next_card() == {"kind": "seat", "seat": 2, "hand": 0}
    assert [c.code for c in d.table.cards] == ["8S"] and d.table.shoe.cards_out == 1


def test_a_card_accepted_from_another_zone_and_moved_there_is_confirmed() -> None:
    d = _accepted_in_another_zone(15)  # from logic 16 refused: seen on seat 2, seat 1 due
    d.camera("8S", "seat:1")  # the dealer moved it to seat 1
    d.tick(WINDOW + 0.5)
    assert _raised(d) == ["card 8S on seat:2 was not scanned by the shoe"]
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed == [{"index": 1, "camera": "match"}] and not d.table.paused


def test_a_run_of_logic_4_replays_the_missed_scan_of_a_card_from_another_zone() -> None:
    d = _accepted_in_another_zone(logic=4)
    d.tick(WINDOW + 0.5)
    assert _raised(d)[-1] == "camera did not see 8S in seat:1"
    assert d.alerts[-1]["code"] == "misscan"


def test_a_card_held_twice_seen_in_another_zone_is_a_wrong_box() -> None:
    """Drawn while paused: the shoe's read held, the camera's sighting (on seat 2, seat 1
    due) held too. The shoe's hold accepted deals it to seat 1; the camera saw it on seat 2."""
    for logic, message in [
        (LOGIC, "TH was due in seat:1 but landed in seat:2"),
        (4, "camera did not see TH in seat:1"),
    ]:
        d = Driver()
        d.table.logic = logic
        start_round(d, 1, 2)
        d.manager(verb="pause", reason="supervisor check")
        d.card("TH")
        d.camera("TH", "seat:2")
        d.tick(WINDOW + 0.5)
        d.manager(verb="resume", reason="check done")
        _resolve(d, "misscan", "void")
        _resolve(d, "unexpected_card", "accept")
        assert [(c.code, c.target["seat"]) for c in d.table.cards] == [("TH", 1)]
        d.tick(WINDOW + 0.5)
        assert _raised(d)[-1] == message


# ------------------------------------------------- the late read after the round (logic 5)


def _accepted_last_card(logic: int = LOGIC, **table: Any) -> Driver:
    """The dealer's draw seen by the camera alone (KD: 7+5+K, bust), accepted: the round's
    last card, so the round settles as it is dealt."""
    d = Driver(**table)
    d.table.logic = logic
    start_round(d, 1)
    for code, zone in [("8S", "seat:1"), ("7C", "dealer"), ("9D", "seat:1"), ("5S", "dealer")]:
        d.card(code)
        d.camera(code, zone)
    d.decide(1, "stand", "stand-1")
    assert d.table.next_card() == {"kind": "dealer_draw"}
    d.camera("KD", "dealer")  # the shoe's read of it is late
    d.tick(d.table.crosscheck.window + 0.5)
    (held,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=held.alert_id, resolution="accept", reason="on video")
    assert d.table.phase == "settled"
    return d


def test_the_late_read_of_the_rounds_last_card_after_the_next_round_opened_is_that_card() -> None:
    """The next round opens round_gap (here 1 s, by default 2 s) after the settlement, inside
    the window (3 s). Before, the late read then was a card drawn before bets closed: the
    table paused (`game_before_time`) and the card counted out of the shoe twice."""
    d = _accepted_last_card()
    d.tick(1.5)
    assert d.table.phase == "betting" and d.table.round_id == "bj-1-R2"
    d.tick(1.0)
    d.card("KD", serial="S-7")
    assert not d.table.paused and _raised(d) == ["card KD on dealer was not scanned by the shoe"]
    (late,) = _late_reads(d)
    assert late["card"] == "KD" and late["index"] is None  # dealt in the round before
    assert d.table.shoe.cards_out == 5 and d.table.shoe.dealt["KD"] == 1
    assert "S-7" in d.table.shoe.serials


def test_the_late_read_after_the_round_was_cancelled_is_that_card() -> None:
    """Before, the cancel forgot the card: its read was "no card is due", a pause, and a
    second card out of the shoe."""
    d = _accepted_camera_card()
    d.manager(verb="cancel_round", reason="table closing")
    d.tick(0.5)
    d.card("8S")
    assert not d.table.paused and len(_late_reads(d)) == 1
    assert d.table.shoe.cards_out == 1 and d.table.shoe.dealt["8S"] == 1


def test_a_run_of_logic_4_replays_the_late_read_after_the_round_as_a_new_card() -> None:
    d = _accepted_last_card(logic=4)
    d.tick(2.5)
    d.card("KD")
    assert d.alerts[-1]["code"] == "game_before_time" and not _late_reads(d)
    assert d.table.shoe.cards_out == 6


def test_no_read_of_the_next_shoe_is_the_late_read_of_the_old_shoes_card() -> None:
    """The round's last card accepted on the camera's sighting, the shoe changed, and a card
    of the new shoe drawn while the table is paused, within the window (30 s here): it is a
    card drawn while paused, held for the manager and counted out of the new shoe. Before
    (logic 4) it was taken for the old shoe's card, which the shoe read before its
    `shoe_loaded`: not held, not counted."""
    d = _accepted_last_card(camera_window_seconds=30)
    d.manager(verb="shoe_change", reason="new shoe")
    d.manager(verb="pause", reason="supervisor check")
    d.shuffle()
    d.load("S2")
    assert d.table.shoe.shoe_id == "S2" and d.table.paused
    d.card("KD")
    assert d.alerts[-1]["message"] == "KD drawn while the round is paused"
    assert not _late_reads(d) and d.table.shoe.cards_out == 1
