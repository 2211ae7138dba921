from datetime import UTC, datetime, timedelta

from studio.controller.crosscheck import CrossCheck, Sighting, Verdict, zone_of, zones_match

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def shoe(code: str, zone: str, dt: float = 0.0, index: int = 1) -> Sighting:
    return Sighting("shoe", code, zone, T0 + timedelta(seconds=dt), {"index": index})


def cam(code: str | None, zone: str, dt: float = 0.0) -> Sighting:
    return Sighting("camera", code, zone, T0 + timedelta(seconds=dt), {"seq": 1})


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_zone_names() -> None:
    assert zone_of({"kind": "seat", "seat": 3, "hand": 0}) == "seat:3"
    assert zone_of({"kind": "seat", "seat": 3, "hand": 1}) == "seat:3:h2"
    assert zone_of({"kind": "dealer_up"}) == "dealer"
    assert zones_match("seat:3:h2", "seat:3")
    assert not zones_match("seat:3:h2", "seat:3:h1")
    assert not zones_match("seat:3", "seat:4")
    assert not zones_match("dealer", "seat:1")


def test_match_either_order() -> None:
    check = CrossCheck()
    assert check.on_shoe(shoe("QH", "seat:1")) is None
    out = check.on_camera(cam("QH", "seat:1", 0.4))
    assert out is not None and out.verdict is Verdict.MATCH
    assert out.shoe is not None and out.shoe.source == "shoe"
    check2 = CrossCheck()
    assert check2.on_camera(cam("QH", "dealer")) is None
    out2 = check2.on_shoe(shoe("QH", "dealer", 0.1))
    assert out2 is not None and out2.verdict is Verdict.MATCH
    assert not check.shoe_waiting and not check2.camera_waiting


def test_two_cards_for_one_zone_seen_in_the_other_order_still_match() -> None:
    check = CrossCheck()
    check.on_shoe(shoe("QD", "seat:2", 0.0, index=1))
    check.on_shoe(shoe("3C", "seat:2", 0.3, index=2))
    first = check.on_camera(cam("3C", "seat:2", 0.8))
    second = check.on_camera(cam("QD", "seat:2", 0.9))
    assert first is not None and first.verdict is Verdict.MATCH and first.shoe is not None
    assert first.shoe.ref["index"] == 2
    assert second is not None and second.verdict is Verdict.MATCH
    assert check.expire(at(10)) == []


def test_mismatch_and_wrong_box_are_decided_when_the_window_ends() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1"))
    assert check.on_camera(cam("QD", "seat:1", 0.5)) is None
    check.on_shoe(shoe("5C", "seat:2", 0.5, index=2))
    assert check.on_camera(cam("5C", "seat:3", 0.6)) is None
    assert check.expire(at(1.9)) == []
    verdicts = [o.verdict for o in check.expire(at(2.6))]
    assert verdicts == [Verdict.MISMATCH, Verdict.WRONG_BOX]
    assert not check.shoe_waiting and not check.camera_waiting


def test_unreadable_camera_card_confirms_the_place() -> None:
    check = CrossCheck()
    check.on_shoe(shoe("7S", "dealer"))
    out = check.on_camera(cam(None, "dealer"))
    assert out is not None and out.verdict is Verdict.CAMERA_UNREADABLE


def test_expiry_reports_missed_scans() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1"))
    check.on_camera(cam("9C", "seat:5", 1.0))
    assert check.next_deadline() == at(2)
    assert check.expire(at(1.9)) == []
    first = check.expire(at(2.0))
    assert [o.verdict for o in first] == [Verdict.CAMERA_MISSED]
    second = check.expire(at(3.0))
    assert [o.verdict for o in second] == [Verdict.SHOE_MISSED]
    assert check.next_deadline() is None


def test_a_face_down_card_waits_for_its_turning_over() -> None:
    """The US hole card shows the camera its back: no window runs until it is turned over,
    then the camera has the usual window to see its face."""
    check = CrossCheck(window=2.0)
    hole = Sighting("shoe", "5S", "dealer", T0, {"index": 4}, face_down=True)
    assert check.on_shoe(hole) is None
    assert check.next_deadline() is None
    assert check.expire(at(60)) == []  # players deciding for a minute: no alert
    check.reveal(at(61))
    assert check.next_deadline() == at(63)
    assert check.expire(at(62.9)) == []
    out = check.on_camera(cam("5S", "dealer", 62.0))
    assert out is not None and out.verdict is Verdict.MATCH


def test_a_face_down_card_not_seen_once_turned_over_is_a_missed_scan() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(Sighting("shoe", "5S", "dealer", T0, {"index": 4}, face_down=True))
    check.reveal(at(30))
    assert [o.verdict for o in check.expire(at(32))] == [Verdict.CAMERA_MISSED]


def test_a_camera_that_sees_a_face_down_card_confirms_it_at_once() -> None:
    """A camera may see it all the same (an unreadable back, or a card dealt face up)."""
    check = CrossCheck(window=2.0)
    check.on_shoe(Sighting("shoe", "5S", "dealer", T0, {"index": 4}, face_down=True))
    out = check.on_camera(cam(None, "dealer", 0.5))
    assert out is not None and out.verdict is Verdict.CAMERA_UNREADABLE


def test_a_missed_card_seen_late_is_a_late_match_not_a_card_the_shoe_missed() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1"))
    assert [o.verdict for o in check.expire(at(2.0))] == [Verdict.CAMERA_MISSED]
    late = check.on_camera(cam("QH", "seat:1", 5.0))
    assert late is not None and late.verdict is Verdict.LATE_MATCH
    assert late.shoe is not None and late.shoe.ref["index"] == 1
    assert check.expire(at(60)) == [] and not check.missed


def test_a_late_sighting_pairs_once_and_only_in_the_missed_card_s_place() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1"))
    check.expire(at(2.0))
    assert check.on_camera(cam("QH", "seat:2", 3.0)) is None  # another place
    assert check.on_camera(cam("QH", "seat:1", 3.1)) is not None
    assert check.on_camera(cam("QH", "seat:1", 3.2)) is None  # a second QH: no partner left
    assert [o.verdict for o in check.expire(at(6))] == [Verdict.SHOE_MISSED] * 2


def test_an_unreadable_late_sighting_confirms_the_missed_card_s_place() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "dealer"))
    check.expire(at(2.0))
    late = check.on_camera(cam(None, "dealer", 4.0))
    assert late is not None and late.verdict is Verdict.LATE_MATCH


def test_a_voided_missed_card_is_forgotten_and_the_round_s_end_clears_the_rest() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1", index=1))
    check.on_shoe(shoe("5C", "seat:2", index=2))
    check.expire(at(2.0))
    check.forget_shoe(1)
    assert check.on_camera(cam("QH", "seat:1", 3.0)) is None
    check.clear()
    assert check.on_camera(cam("5C", "seat:2", 3.5)) is None
    assert not check.missed


def accepted(code: str, dt: float, serial: str | None = None) -> Sighting:
    """A card dealt on the camera's sighting at ``dt`` (a manager accepted it)."""
    ref = {"source": {"device": "cam", "seq": 1}, "serial": serial, "accepted": "A1"}
    return Sighting("camera", code, "seat:1", at(dt), ref)


def test_the_shoes_late_read_of_a_card_dealt_on_the_cameras_sighting_is_that_card() -> None:
    check = CrossCheck(window=3.0)
    check.on_accepted_camera_card(accepted("8S", 10.0))
    assert not check.undecided() and check.next_deadline() is None  # nothing waits
    assert check.late_shoe_read("8C", None, at(11)) is None  # another card
    paired = check.late_shoe_read("8S", "S-1", at(12.5))
    assert paired is not None and paired.ref["accepted"] == "A1"
    assert check.late_shoe_read("8S", None, at(12.6)) is None  # one read per card


def test_a_late_read_pairs_only_within_the_window_and_with_the_same_serial() -> None:
    check = CrossCheck(window=3.0)
    check.on_accepted_camera_card(accepted("8S", 10.0, serial="S-1"))
    assert check.late_shoe_read("8S", "S-2", at(11)) is None
    assert check.late_shoe_read("8S", "S-1", at(13.1)) is None  # its window is over
    assert not check.accepted
    check.on_accepted_camera_card(accepted("8S", 20.0, serial="S-1"))
    assert check.late_shoe_read("8S", "S-1", at(23.0)) is not None
    check.on_accepted_camera_card(accepted("8S", 30.0))
    check.clear()  # a new round
    assert check.late_shoe_read("8S", None, at(30.5)) is None


# -- logic 13: the hole card compared only once turned over (after review) ----------------


def _hole_waits() -> CrossCheck:
    check = CrossCheck(window=2.0, hole_waits=True)
    check.on_shoe(Sighting("shoe", "AS", "dealer", T0, {"index": 4}, face_down=True))
    return check


def test_a_face_up_card_missed_elsewhere_is_not_paired_with_the_hole_cards_sighting() -> None:
    # Hole card AS seen face up by the camera; a player's AS missed by the camera: its window
    # ended in a wrong box with the hole card's sighting, "AS was due in seat:1 but landed
    # in dealer", telling every reader the hole card.
    check = _hole_waits()
    assert check.on_camera(cam("AS", "dealer", 0.2)) is None  # waits for the turn
    check.on_shoe(shoe("AS", "seat:1", 1.0, index=5))
    [missed] = check.expire(at(3.5))
    assert missed.verdict is Verdict.CAMERA_MISSED and missed.camera is None
    [confirmed] = check.reveal(at(10))
    assert confirmed.verdict is Verdict.MATCH and confirmed.shoe is not None
    assert confirmed.shoe.ref["index"] == 4


def test_the_turn_keeps_the_waiting_cards_in_their_order() -> None:
    # Review: the turned card went to the end of the list, so its alert and a later card's
    # swapped ids when their windows ended together: a logic-12 log replayed otherwise.
    check = CrossCheck(window=2.0)
    check.on_shoe(Sighting("shoe", "5S", "dealer", T0, {"index": 4}, face_down=True))
    check.on_shoe(shoe("9D", "seat:1", 1.0, index=5))
    check.reveal(at(1.0))
    out = check.expire(at(10))
    assert [o.shoe.ref["index"] for o in out if o.shoe is not None] == [4, 5]


def test_an_unread_sighting_waiting_for_the_turn_confirms_no_other_card() -> None:
    # Review: the up card's window ended unseen; the hole card's back, reported unreadable
    # in the dealer's zone, was taken for the up card's late read ("confirmed" by a back).
    check = _hole_waits()
    check.on_shoe(shoe("7C", "dealer", -1.0, index=2))  # the up card (before the hole card)
    check.expire(at(3.0))  # its window ends unseen: a missed scan
    assert check.on_camera(cam(None, "dealer", 3.5)) is None  # the back: it waits
    assert check.missed and check.camera_waiting


def test_a_sighting_that_waited_has_a_window_of_its_own_from_the_turn() -> None:
    # Review: a misread of the hole card (7D for AS) kept its old time and was alerted the
    # moment the card was turned, before the camera could read it turned.
    check = _hole_waits()
    check.on_camera(cam("7D", "dealer", 0.5))
    assert check.reveal(at(30)) == []
    assert check.expire(at(31)) == []  # within the new window: the camera may read it yet
    assert check.next_deadline() == at(32)
