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
    late = _accepted_camera_card()
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
