from datetime import UTC, datetime, timedelta

from studio.controller.crosscheck import CrossCheck, Sighting, Verdict, zone_of, zones_match

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def shoe(code: str, zone: str, dt: float = 0.0) -> Sighting:
    return Sighting("shoe", code, zone, T0 + timedelta(seconds=dt), {"index": 1})


def cam(code: str | None, zone: str, dt: float = 0.0) -> Sighting:
    return Sighting("camera", code, zone, T0 + timedelta(seconds=dt), {"seq": 1})


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


def test_mismatch_wrong_box_unreadable() -> None:
    check = CrossCheck()
    check.on_shoe(shoe("QH", "seat:1"))
    out = check.on_camera(cam("QD", "seat:1"))
    assert out is not None and out.verdict is Verdict.MISMATCH
    check.on_shoe(shoe("5C", "seat:2"))
    out = check.on_camera(cam("5C", "seat:3"))
    assert out is not None and out.verdict is Verdict.WRONG_BOX
    check.on_shoe(shoe("7S", "dealer"))
    out = check.on_camera(cam(None, "dealer"))
    assert out is not None and out.verdict is Verdict.CAMERA_UNREADABLE


def test_expiry_reports_missed_scans() -> None:
    check = CrossCheck(window=2.0)
    check.on_shoe(shoe("QH", "seat:1"))
    check.on_camera(cam("9C", "seat:5", 1.0))
    assert check.next_deadline() == T0 + timedelta(seconds=2)
    assert check.expire(T0 + timedelta(seconds=1.9)) == []
    first = check.expire(T0 + timedelta(seconds=2.0))
    assert [o.verdict for o in first] == [Verdict.CAMERA_MISSED]
    second = check.expire(T0 + timedelta(seconds=3.0))
    assert [o.verdict for o in second] == [Verdict.SHOE_MISSED]
    assert check.next_deadline() is None
