"""Cards the cross-check alerted about, after the alert (table logic 5; pure, no I/O).

A wrong box or a mismatch consumed the camera's sighting; when the camera then saw the
card in its own zone (the dealer moved it there, or the camera's audit read it again and
now agrees with the shoe) that sighting was "a card the shoe never scanned": a second
`misscan`, whose accept dealt the one card twice. Now it is that card (`card_confirmed`,
`camera: late_match`), as for a card the camera missed and saw late.

A card voided moves the cards after it up a place; the sightings waiting for them and the
open alerts about them kept their old numbers, so voiding or correcting such a card later
changed the card re-dealt in its old place, or nothing at all, and the round settled with
the card the manager had voided.

A confirmed card slid or laid again (a split's second card on its new hand) is reported by
the camera as `removed`, then `placed` anew: the controller ignored `removed`, so the new
placement was a misscan whose accept dealt the card twice. A card no source read was
offered "accept", which dealt nothing. A dealt card could be corrected to a card the shoe
had no copy of left.
"""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError
from studio.controller.table import LOGIC

WINDOW = 3.0  # the table's camera_window_seconds (the default)


def _open(d: Driver) -> list[tuple[str, str]]:
    return [(a.code.value, a.message) for a in d.table.alerts.open_alerts()]


def _resolve_all(d: Driver, resolution: str) -> None:
    for alert in d.table.alerts.open_alerts():
        d.manager(verb="resolve", alert_id=alert.alert_id, resolution=resolution, reason="test")


def _wrong_box_then_moved(logic: int = LOGIC) -> Driver:
    """Seat 1's 8S landed on seat 2 (a wrong box); the dealer then moved it to seat 1."""
    d = Driver()
    d.table.logic = logic
    start_round(d, 1, 2)
    d.card("8S")
    d.camera("8S", "seat:2")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [("wrong_box", "8S was due in seat:1 but landed in seat:2")]
    d.camera("8S", "seat:1")  # moved where it is due: the camera places it afresh
    d.tick(WINDOW + 0.5)
    return d


def test_a_wrong_box_card_moved_to_its_box_is_that_card_not_a_card_the_shoe_missed() -> None:
    d = _wrong_box_then_moved()
    assert _open(d) == [("wrong_box", "8S was due in seat:1 but landed in seat:2")]
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert [(c["index"], c["camera"]) for c in confirmed] == [(1, "late_match")]
    _resolve_all(d, "accept")
    assert [c.code for c in d.table.cards] == ["8S"] and not d.table.paused
    assert d.table.shoe.cards_out == 1 and d.table.shoe.dealt["8S"] == 1


def test_a_run_of_logic_4_replays_the_misscan_of_a_wrong_box_card_moved() -> None:
    """What it did: a second alert, and accepting both dealt 8S to seat 1 and to seat 2."""
    d = _wrong_box_then_moved(logic=4)
    assert _open(d)[-1] == ("misscan", "card 8S on seat:1 was not scanned by the shoe")
    _resolve_all(d, "accept")
    assert [(c.code, c.target["seat"]) for c in d.table.cards] == [("8S", 1), ("8S", 2)]


def test_a_mismatch_the_camera_then_reads_as_the_shoe_did_is_that_card() -> None:
    """The camera read QD where the shoe read QH; its audit reads the card again and
    publishes QH (`removed` QD, `placed` QH). Before, a misscan held QH: accepted, a second
    QH went to the next box."""
    second = ("misscan", "card QH on seat:1 was not scanned by the shoe")
    for logic, after in [(LOGIC, []), (4, [second])]:
        d = Driver()
        d.table.logic = logic
        start_round(d, 1, 2)
        d.card("QH")
        d.camera("QD", "seat:1")
        d.tick(WINDOW + 0.5)
        mismatch = ("card_mismatch", "shoe read QH, camera saw QD in seat:1")
        assert _open(d) == [mismatch]
        d.camera("QH", "seat:1")
        d.tick(WINDOW + 0.5)
        assert _open(d) == [mismatch, *after]


def _two_dealer_draws_unseen(logic: int = LOGIC) -> Driver:
    """Dealer 2C 3D draws 4H, then 2S; the camera sees neither: two misscans."""
    d = Driver()
    d.table.logic = logic
    start_round(d, 1)
    for code, zone in [("TS", "seat:1"), ("2C", "dealer"), ("9D", "seat:1"), ("3D", "dealer")]:
        d.card(code)
        d.camera(code, zone)
    d.decide(1, "stand", "stand-1")
    d.card("4H")
    d.card("2S")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [
        ("misscan", "camera did not see 4H in dealer"),
        ("misscan", "camera did not see 2S in dealer"),
    ]
    return d


def test_voiding_two_cards_in_the_order_they_were_dealt_removes_both() -> None:
    d = _two_dealer_draws_unseen()
    _resolve_all(d, "void")  # 4H, then 2S (by then the 5th card)
    assert [c.code for c in d.table.cards] == ["TS", "2C", "9D", "3D"]
    voided = [e["data"]["voided"] for e in d.events if e["type"] == "manager_action"]
    assert voided[-2:] == [["4H"], ["2S"]]
    assert d.table.next_card() == {"kind": "dealer_draw"}


def test_a_run_of_logic_4_replays_the_second_void_that_removed_nothing() -> None:
    d = _two_dealer_draws_unseen(logic=4)
    _resolve_all(d, "void")
    assert [c.code for c in d.table.cards] == ["TS", "2C", "9D", "3D", "2S"]


def test_a_card_waiting_for_the_camera_keeps_its_alert_on_it_when_an_earlier_one_is_voided() -> (
    None
):
    """4H unseen (a misscan), 2S still in its window, 4H voided; the dealer deals 7H in its
    place. 2S then unseen: its misscan voided removes 2S. Before, it removed 7H (the 6th
    card, 2S's old number) and the round went on with the card the manager voided."""
    d = Driver()
    start_round(d, 1)
    for code, zone in [("TS", "seat:1"), ("2C", "dealer"), ("9D", "seat:1"), ("3D", "dealer")]:
        d.card(code)
        d.camera(code, zone)
    d.decide(1, "stand", "stand-1")
    d.card("4H")
    d.tick(1.5)
    d.card("2S")
    d.tick(WINDOW - 1.5 + 0.1)  # 4H's window is over, 2S's not
    assert _open(d) == [("misscan", "camera did not see 4H in dealer")]
    _resolve_all(d, "void")
    d.card("7H")
    d.camera("7H", "dealer")
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed[-1] == {"index": 6, "camera": "match"}
    d.tick(WINDOW)
    assert _open(d) == [("misscan", "camera did not see 2S in dealer")]
    _resolve_all(d, "void")
    assert [c.code for c in d.table.cards] == ["TS", "2C", "9D", "3D", "7H"]


# ------------------------------------------- cards the camera saw leave their spot (logic 5)


def _removed(d: Driver, code: str | None, zone: str) -> None:
    """The camera saw the card it placed there leave its spot (slid, or lifted)."""
    seq = d.device("cam")
    data = {"device": "cam", "seq": seq, "ts": d.ts(), "card": code, "zone": zone}
    d.feed("camera.card", {**data, "confidence": 0.99, "event": "removed"})


def _split_eights(logic: int = LOGIC, *, placed_first: bool = False) -> Driver:
    """Seat 1 holds 8S 8D against the dealer's 7C (5S the hole card), and splits."""
    d = Driver()
    d.table.logic = logic
    start_round(d, 1)
    cards = [("8S", "seat:1"), ("7C", "dealer"), ("8D", "seat:1"), ("5S", "dealer")]
    for code, zone in cards:
        d.card(code)
        d.camera(code, zone)
    d.decide(1, "split", "split-1")
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}
    # The dealer lays 8D on the second hand's spot: the camera sees it leave and land.
    if placed_first:
        d.camera("8D", "seat:1:h2")
        _removed(d, "8D", "seat:1")
    else:
        _removed(d, "8D", "seat:1")
        d.camera("8D", "seat:1:h2")
    d.tick(WINDOW + 0.5)
    return d


def test_a_splits_second_card_laid_on_its_new_hand_is_that_card() -> None:
    """Before, it was a card the shoe never scanned: every split paused the table with a
    misscan, whose accept dealt a second 8D to the hand due."""
    d = _split_eights()
    assert _open(d) == [] and not d.table.paused
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed[-1] == {"index": 3, "camera": "moved"}
    d.card("3H")  # the first hand's second card
    d.camera("3H", "seat:1:h1")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [] and d.table.engine is not None
    assert d.table.engine.pending() is not None  # seat 1's first hand decides on 11
    assert [c.code for c in d.table.cards] == ["8S", "7C", "8D", "5S", "3H"]


def test_a_cards_new_placement_arriving_before_its_removal_is_that_card_moved() -> None:
    """The camera's messages are not held in its order (a re-delivery may overtake)."""
    d = _split_eights(placed_first=True)
    assert _open(d) == [] and not d.table.paused
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed[-1] == {"index": 3, "camera": "moved"}


def test_a_run_of_logic_4_replays_the_misscan_of_a_splits_second_card() -> None:
    d = _split_eights(logic=4)
    assert _open(d) == [("misscan", "card 8D on seat:1:h2 was not scanned by the shoe")]


def test_a_confirmed_card_moved_to_another_box_is_a_wrong_box() -> None:
    d = Driver()
    start_round(d, 1, 2)
    d.card("8S")
    d.camera("8S", "seat:1")
    _removed(d, "8S", "seat:1")
    d.camera("8S", "seat:2")  # slid onto seat 2's spot
    assert _open(d) == []  # a shoe read of another 8S, due there, may still come
    d.tick(WINDOW + 0.5)
    assert _open(d) == [("wrong_box", "8S was due in seat:1 but landed in seat:2")]
    _removed(d, "8S", "seat:2")
    d.camera("8S", "seat:1")  # and back: that card, no misscan
    d.tick(WINDOW + 0.5)
    assert len(_open(d)) == 1
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert [c["camera"] for c in confirmed] == ["match", "late_match"]
    _resolve_all(d, "accept")
    assert [c.code for c in d.table.cards] == ["8S"] and not d.table.paused


def test_a_card_laid_in_another_box_with_its_shoe_read_is_a_new_card_not_one_that_left() -> None:
    """Eight decks: seat 1's 8S taken off its spot (a hand over it for a while), and
    another 8S dealt to seat 2, the camera's sighting before the shoe's read: that is the
    new card, confirmed, not seat 1's 8S in the wrong box."""
    d = Driver()
    start_round(d, 1, 2)
    d.card("8S")
    d.camera("8S", "seat:1")
    _removed(d, "8S", "seat:1")
    d.camera("8S", "seat:2")
    d.card("8S")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [] and [c.code for c in d.table.cards] == ["8S", "8S"]
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed == [{"index": 1, "camera": "match"}, {"index": 2, "camera": "match"}]


def test_a_card_seen_in_a_spot_it_then_left_is_not_a_card_the_shoe_missed() -> None:
    """The camera saw 8S laid on seat 2, then slid to seat 1, where the shoe's read is due.
    Before, its first sighting stayed: 3 s later a misscan held 8S on seat 2."""
    d = Driver()
    start_round(d, 1, 2)
    d.camera("8S", "seat:2")
    _removed(d, "8S", "seat:2")
    d.camera("8S", "seat:1")
    d.card("8S")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [] and [c.code for c in d.table.cards] == ["8S"]


# ------------------------------------------------ a card no source read (logic 5)


def _unread_card_only_the_camera_saw(logic: int = LOGIC) -> Driver:
    d = Driver()
    d.table.logic = logic
    start_round(d, 1)
    d.camera(None, "seat:1")  # the shoe did not scan it, the camera could not read it
    d.tick(WINDOW + 0.5)
    assert _open(d) == [("misscan", "card (unreadable) on seat:1 was not scanned by the shoe")]
    return d


def test_a_card_no_source_read_cannot_be_accepted_and_voided_counts_out_of_the_shoe() -> None:
    """Before, "accept" was offered and dealt nothing: the table played on with a card on
    seat 1's spot that no box held and the shoe's count never had."""
    d = _unread_card_only_the_camera_saw()
    assert d.alerts[-1]["allowed_resolutions"] == ["void", "cancel"]
    (alert,) = d.table.alerts.open_alerts()
    with pytest.raises(AlertError, match="'accept' is not allowed for misscan"):
        d.manager(verb="resolve", alert_id=alert.alert_id, resolution="accept", reason="test")
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution="void", reason="taken off")
    assert d.table.shoe.cards_out == 1 and not d.table.cards
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}  # dealt again


def test_a_run_of_logic_4_replays_the_accept_of_a_card_no_source_read() -> None:
    d = _unread_card_only_the_camera_saw(logic=4)
    assert d.alerts[-1]["allowed_resolutions"] == ["accept", "void", "cancel"]
    _resolve_all(d, "accept")
    assert not d.table.cards and d.table.shoe.cards_out == 0 and not d.table.paused


# ------------------------------------------------ a correction to an impossible card (logic 5)


def _mismatch_on_a_card_dealt_before(logic: int = LOGIC) -> Driver:
    """One deck: QD dealt to seat 1; the shoe then reads QH for the dealer, the camera QD."""
    d = Driver(ruleset={"preset": "clubhouse", "shoe": {"decks": 1}})
    d.table.logic = logic
    d.shuffle(decks=1)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(20)
    d.card("QD")
    d.camera("QD", "seat:1")
    d.card("QH")
    d.camera("QD", "dealer")
    d.tick(WINDOW + 0.5)
    assert _open(d) == [("card_mismatch", "shoe read QH, camera saw QD in dealer")]
    return d


def test_a_dealt_card_is_not_corrected_to_a_card_the_shoe_has_no_copy_of() -> None:
    """Before, the correction was taken: two QD in a one-deck shoe, the round played on it."""
    d = _mismatch_on_a_card_dealt_before()
    (alert,) = d.table.alerts.open_alerts()
    with pytest.raises(AlertError, match="QD would be copy 2 in a 1-deck shoe"):
        d.manager(
            verb="resolve", alert_id=alert.alert_id, resolution="correct", card="QD", reason="x"
        )
    assert [c.code for c in d.table.cards] == ["QD", "QH"] and d.table.paused
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution="accept", reason="shoe's QH")
    assert not d.table.paused and d.table.shoe.dealt["QD"] == 1


def test_a_run_of_logic_4_replays_the_correction_to_an_impossible_card() -> None:
    d = _mismatch_on_a_card_dealt_before(logic=4)
    (alert,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution="correct", card="QD", reason="x")
    assert [c.code for c in d.table.cards] == ["QD", "QD"] and d.table.shoe.dealt["QD"] == 2
