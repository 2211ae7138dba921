"""A camera sighting of a card already resolved is not offered as a card the shoe never
scanned, nor dealt again (table logic 16).

A reviewer's walk-throughs, each of which dealt one physical card twice up to logic 15:

- The shoe read 7D, the camera 7C on the dealer's spot: a ``card_mismatch``. The dealer
  straightened the card, the camera reported 7C there again: a ``misscan``, "card 7C on
  dealer was not scanned by the shoe" (the kept sighting of the mismatched card still said
  7D). The manager corrected the mismatch to 7C, then accepted the misscan: TH, 7C, 7C.
  Now the corrected card's kept sighting is 7C (a sighting of it after the correction is a
  late match), and a card held from the camera is accepted only into the zone it was seen
  in (the dealer's spot, while seat 1's card is due: refused).
- A card the camera did not see (a lagging camera) was voided; the camera then reported
  it where it was dealt: a misscan, whose accept dealt the voided card to seat 1. Now the
  voided card's sighting stays known for the round: its sighting is ``voided_card_seen``.
"""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError
from studio.controller.table import LOGIC

WINDOW = 3.0


def _mismatched(logic: int) -> Driver:
    d = Driver()
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    start_round(d, 1)
    d.card("TH")
    d.camera("TH", "seat:1")
    d.card("7D")  # the shoe misread the dealer's 7C
    d.camera("7C", "dealer")
    d.tick(WINDOW + 0.5)
    assert _open(d) == {"card_mismatch": "shoe read 7D, camera saw 7C in dealer"}
    return d


def _open(d: Driver) -> dict[str, str]:
    return {a.code.value: a.message for a in d.table.alerts.open_alerts()}


def _id(d: Driver, code: str) -> str:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == code]
    return alert.alert_id


def _seen_again(d: Driver) -> None:
    """The dealer straightens the card: the camera reports it removed, then placed."""
    d.feed(
        "camera.card",
        {
            "device": "cam",
            "seq": d.device("cam"),
            "ts": d.ts(),
            "card": "7C",
            "zone": "dealer",
            "confidence": 0.99,
            "event": "removed",
        },
    )
    d.camera("7C", "dealer")


def _correct(d: Driver) -> None:
    mismatch = _id(d, "card_mismatch")
    d.manager(verb="resolve", alert_id=mismatch, resolution="correct", card="7C", reason="cam")


def _confirmed(d: Driver) -> list[str]:
    return [e["data"]["camera"] for e in d.events if e["type"] == "card_confirmed"]


def test_a_camera_card_seen_on_the_dealer_s_spot_is_not_accepted_as_seat_1_s() -> None:
    d = _mismatched(LOGIC)
    _seen_again(d)
    d.tick(WINDOW + 0.5)  # the sighting came before the correction: a misscan
    misscan = _id(d, "misscan")
    _correct(d)
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    with pytest.raises(AlertError, match="7C was seen on dealer, but the card due now is seat 1"):
        d.manager(verb="resolve", alert_id=misscan, resolution="accept", reason="camera")
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    assert d.table.shoe.dealt["7C"] == 1


def test_the_corrected_card_seen_after_the_correction_is_that_card() -> None:
    d = _mismatched(LOGIC)
    _correct(d)
    _seen_again(d)
    d.tick(WINDOW + 0.5)
    assert _open(d) == {} and not d.table.paused
    assert _confirmed(d)[-1] == "late_match"
    assert [c.code for c in d.table.cards] == ["TH", "7C"]


def test_the_corrected_card_s_sighting_waiting_is_paired_at_the_correction() -> None:
    d = _mismatched(LOGIC)
    _seen_again(d)  # still in its window
    _correct(d)
    assert _confirmed(d)[-1] == "late_match"
    d.tick(WINDOW + 0.5)
    assert _open(d) == {} and not d.table.paused


def test_logic_15_replays_the_second_deal_of_the_corrected_card() -> None:
    d = _mismatched(15)
    _seen_again(d)
    d.tick(WINDOW + 0.5)
    misscan = _id(d, "misscan")
    _correct(d)
    d.manager(verb="resolve", alert_id=misscan, resolution="accept", reason="camera")
    assert [c.code for c in d.table.cards] == ["TH", "7C", "7C"]


def _voided_unseen(logic: int) -> Driver:
    d = Driver()
    d.table.logic = logic
    start_round(d, 1)
    d.card("TH")
    d.camera("TH", "seat:1")
    d.card("7C")  # the camera lags
    d.tick(WINDOW + 0.5)
    assert _open(d) == {"misscan": "camera did not see 7C in dealer"}
    d.manager(verb="resolve", alert_id=_id(d, "misscan"), resolution="void", reason="not there")
    d.camera("7C", "dealer")  # the lagging camera's sighting of the voided card
    d.card("9D")  # the dealer's up card dealt again
    d.camera("9D", "dealer")
    d.tick(WINDOW + 0.5)
    return d


def test_the_camera_s_late_sighting_of_a_voided_card_is_that_card() -> None:
    d = _voided_unseen(LOGIC)
    assert _open(d) == {} and not d.table.paused
    (seen,) = [e["data"] for e in d.events if e["type"] == "voided_card_seen"]
    assert seen["voided"] == 2 and seen["zone"] == "dealer"
    assert [c.code for c in d.table.cards] == ["TH", "9D"]
    assert d.table.shoe.dealt["7C"] == 1  # voided, it did leave the shoe: once


def test_logic_15_replays_the_voided_card_s_sighting_as_a_misscan() -> None:
    d = _voided_unseen(15)
    assert _open(d) == {"misscan": "card 7C on dealer was not scanned by the shoe"}


def test_a_camera_card_is_accepted_only_into_the_zone_it_was_seen_in() -> None:
    d = Driver()
    start_round(d, 1, 2)
    d.camera("8S", "seat:2")  # seat 1's card is due
    d.tick(WINDOW + 0.5)
    misscan = _id(d, "misscan")
    with pytest.raises(AlertError, match="8S was seen on seat:2, but the card due now is seat 1"):
        d.manager(verb="resolve", alert_id=misscan, resolution="accept", reason="on video")
    assert d.table.cards == []
    d.manager(verb="resolve", alert_id=misscan, resolution="void", reason="misdealt")
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}
