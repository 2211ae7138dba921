"""The dealer's up card misread by the camera while the hole card lies face down (logic 17).

A review: the camera read the up card 6H as 5H. Since logic 13 a sighting in the dealer's zone
waits for the hole card's turn, the up card's own sighting too: the up card's window ended as
a misscan, "camera did not see 6H in dealer" (no correction offered), and after the turn the
sighting left over was "card 5H on dealer was not scanned by the shoe", whose accept dealt
5H, a card never in the shoe, as the dealer's draw (6H, KC, 5H: 21, and the player's 19
lost). With no sighting of the hole card after the turn, the misread went out instead as
"shoe read 7C, camera saw TH", pinned on the hole card. From logic 17 a misread up card is
one `card_mismatch` naming both reads (the camera's concealed while the hole card is down),
offering a correction, and no path deals a card the shoe never read.
"""

from __future__ import annotations

from datetime import timedelta

from logic17_support import Recorder, open_round
from test_controller_crosscheck import T0, at, cam

from studio.controller.crosscheck import CrossCheck, Sighting, Verdict
from studio.controller.table import LOGIC


def _classic6_up_card_misread(logic: int = LOGIC) -> Recorder:
    # classic6 deals the hole card first, face down; the up card after it.
    d = Recorder("classic6", logic=logic)
    open_round(d, 1, decks=6)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.card("KC")  # the hole card, face down: the camera sees its back
    d.card("9D")
    d.camera("9D", "seat:1")
    d.card("6H")  # the up card: the shoe reads 6H, the camera 5H
    d.camera("5H", "dealer")
    d.tick(3.5)
    return d


def test_a_misread_up_card_dealt_after_the_hole_card_is_one_mismatch() -> None:
    d = _classic6_up_card_misread()
    [alert] = d.raised()
    assert alert["code"] == "card_mismatch"
    assert alert["message"] == "shoe read 6H, camera saw ?? in dealer"  # the hole card is down
    held = d.table.alerts.get(alert["alert_id"])
    assert held.message == "shoe read 6H, camera saw 5H in dealer"  # the managers' console
    assert "correct" in held.allowed
    d.resolve(alert["alert_id"], "accept")  # the up card is 6H, as the shoe read it
    d.decide(1, "stand", "s1")
    d.tick(0.5)
    d.camera("KC", "dealer")  # turned over, read right
    d.tick(3.5)
    assert len(d.raised()) == 1 and d.table.alerts.open_alerts() == []
    assert d.table.engine is not None
    assert [c.code for c in d.table.engine.round.dealer_cards] == ["6H", "KC"]  # no 5H
    d.card("2C")  # the dealer draws to 18: the player's 19 wins
    d.camera("2C", "dealer")
    d.tick(3.5)
    [settled] = [e for e in d.events if e["type"] == "round_settled"]
    [box] = settled["data"]["result"]["boxes"]
    assert box["wagers"][0]["payout"] == "20.00"
    assert d.replayed() == d.outputs


def test_the_misread_up_card_corrected_takes_the_camera_s_read() -> None:
    d = _classic6_up_card_misread()
    [alert] = d.raised()
    d.resolve(alert["alert_id"], "correct", card="5H")  # the camera was right
    assert d.table.engine is not None
    assert [c.code for c in d.table.engine.round.dealer_cards] == ["5H", "KC"]
    d.decide(1, "stand", "s1")
    d.tick(0.5)
    d.camera("KC", "dealer")
    d.tick(3.5)
    assert len(d.raised()) == 1 and d.table.alerts.open_alerts() == []
    assert d.replayed() == d.outputs


def test_a_logic_16_run_replays_as_it_was_played() -> None:
    d = _classic6_up_card_misread(logic=16)
    [alert] = d.raised()
    assert (alert["code"], alert["message"]) == ("misscan", "camera did not see 6H in dealer")
    assert d.replayed() == d.outputs


def test_a_misread_up_card_with_the_hole_card_dealt_in_its_window_is_one_mismatch() -> None:
    # clubhouse deals the up card first; the hole card came within the up card's window, and
    # the camera never reports the hole card (its back, then nothing after the turn).
    d = Recorder()
    open_round(d, 1)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.card("9H")
    d.camera("TH", "dealer")  # the up card misread
    d.card("6D")
    d.camera("6D", "seat:1")
    d.card("7C")  # the hole card, face down
    d.tick(3.5)
    [alert] = d.raised()
    assert (alert["code"], alert["message"]) == (
        "card_mismatch",
        "shoe read 9H, camera saw ?? in dealer",
    )
    assert d.table.alerts.get(alert["alert_id"]).subject == {"index": 2, "camera_card": "TH"}
    d.resolve(alert["alert_id"], "accept")
    d.decide(1, "stand", "c1")
    d.tick(3.5)
    # The hole card turned over, unseen: its own misscan, not the up card's misread on it.
    [_, missed] = d.raised()
    assert (missed["code"], missed["message"]) == ("misscan", "camera did not see 7C in dealer")
    assert d.replayed() == d.outputs


def _up_card_seen_late(seen: str) -> Recorder:
    # The camera reads the up card only after its window ended (a misscan), the hole card down.
    d = _classic6_up_card_unseen()
    d.camera(seen, "dealer")  # it waits for the turn: it may be the hole card's face
    d.tick(1)
    d.decide(1, "stand", "s1")
    d.tick(0.5)
    d.camera("KC", "dealer")  # turned over, read right
    d.tick(3.5)
    return d


def _classic6_up_card_unseen() -> Recorder:
    d = Recorder("classic6")
    open_round(d, 1, decks=6)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.card("KC")
    d.card("9D")
    d.camera("9D", "seat:1")
    d.card("6H")
    d.tick(3.5)
    [missed] = d.raised()
    assert (missed["code"], missed["message"]) == ("misscan", "camera did not see 6H in dealer")
    d.resolve(missed["alert_id"], "accept")
    return d


def test_a_late_misread_left_after_the_turn_is_a_mismatch_not_a_card_to_deal() -> None:
    # Up to 16: "card 5H on dealer was not scanned by the shoe", whose accept dealt 5H.
    d = _up_card_seen_late("5H")
    [_, late] = d.raised()
    assert (late["code"], late["message"]) == (
        "card_mismatch",
        "shoe read 6H, camera saw 5H in dealer",
    )
    assert d.table.alerts.get(late["alert_id"]).subject == {"index": 4, "camera_card": "5H"}
    assert d.replayed() == d.outputs


def test_a_late_read_of_the_up_card_left_after_the_turn_confirms_it() -> None:
    # Up to 16: "card 6H on dealer was not scanned by the shoe": accepted, 6H dealt twice.
    d = _up_card_seen_late("6H")
    assert len(d.raised()) == 1 and d.table.alerts.open_alerts() == []
    late = [e["data"] for e in d.events if e["type"] == "card_confirmed"][-1]
    assert (late["index"], late["camera"]) == (4, "late_match")
    assert d.replayed() == d.outputs


# -- the cross-check alone -------------------------------------------------------------------


def _up_card_after_the_hole_card(pairs_waiting: bool) -> CrossCheck:
    check = CrossCheck(window=2.0, hole_waits=True, pairs_waiting=pairs_waiting)
    check.on_shoe(Sighting("shoe", "KC", "dealer", T0, {"index": 2}, face_down=True))
    check.on_shoe(Sighting("shoe", "6H", "dealer", T0 + timedelta(seconds=1), {"index": 4}))
    assert check.on_camera(cam("5H", "dealer", 1.2)) is None  # waits: the hole card is down
    return check


def test_the_up_card_s_window_ends_in_a_mismatch_with_the_sighting_waiting_there() -> None:
    check = _up_card_after_the_hole_card(pairs_waiting=True)
    [out] = check.expire(at(3.0))
    assert out.verdict is Verdict.MISMATCH and out.shoe is not None and out.camera is not None
    assert (out.shoe.code, out.camera.code) == ("6H", "5H")
    assert not check.camera_waiting
    assert check.reveal(at(10)) == []
    assert check.on_camera(cam("KC", "dealer", 10.5)) is not None  # the hole card, turned
    assert check.expire(at(20)) == []


def test_up_to_logic_16_the_up_card_s_window_ends_unseen() -> None:
    check = _up_card_after_the_hole_card(pairs_waiting=False)
    [out] = check.expire(at(3.0))
    assert out.verdict is Verdict.CAMERA_MISSED
    check.reveal(at(10))
    check.on_camera(cam("KC", "dealer", 10.5))
    [left] = check.expire(at(20))
    assert left.verdict is Verdict.SHOE_MISSED


def test_no_face_up_card_elsewhere_is_settled_against_a_sighting_waiting_for_the_turn() -> None:
    # Logic 13 stands: a wrong box with it ("AS was due in seat:1 but landed in dealer")
    # would tell the hole card.
    check = CrossCheck(window=2.0, hole_waits=True, pairs_waiting=True)
    check.on_shoe(Sighting("shoe", "AS", "dealer", T0, {"index": 4}, face_down=True))
    assert check.on_camera(cam("AS", "dealer", 0.2)) is None
    check.on_shoe(Sighting("shoe", "AS", "seat:1", at(1.0), {"index": 5}))
    [missed] = check.expire(at(3.5))
    assert missed.verdict is Verdict.CAMERA_MISSED and missed.camera is None


def test_an_unread_sighting_left_after_the_turn_confirms_no_missed_card() -> None:
    # A back reported unreadable is no read of the up card.
    check = CrossCheck(window=2.0, hole_waits=True, pairs_waiting=True)
    check.on_shoe(Sighting("shoe", "KC", "dealer", T0, {"index": 2}, face_down=True))
    check.on_shoe(Sighting("shoe", "6H", "dealer", at(1.0), {"index": 4}))
    [missed] = check.expire(at(3.5))
    assert missed.verdict is Verdict.CAMERA_MISSED
    check.on_camera(cam(None, "dealer", 4.0))
    check.reveal(at(10))
    check.on_camera(cam("KC", "dealer", 10.5))
    [left] = check.expire(at(20))
    assert left.verdict is Verdict.SHOE_MISSED and left.shoe is None
