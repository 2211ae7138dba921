"""A card the shoe pulled but could not read counts toward a single-source shoe's penetration
(table logic 24).

A review of the manager's console: on a single-source table (no camera) a ``misread`` shoe
event never counted: the card left the shoe (the dealer deals the target again), but
``cards_dealt`` stayed as it was, before and after the alert's accept, and each misread moved
the cut point one card later. On a camera table the camera's sighting of the card counts it
once the alert is resolved (as before). A run logged with logic 23 replays as played.
"""

from __future__ import annotations

from logic17_support import Recorder, open_round


def _misread_after_one_card(logic: int | None = None, *, single_source: bool = True) -> Recorder:
    d = (
        Recorder(single_source=single_source)
        if logic is None
        else Recorder(logic=logic, single_source=single_source)
    )
    open_round(d, 1)
    d.card("KD")
    assert d.table.shoe.cards_dealt == 1
    d.device_event("shoe.event", "shoe", "misread")
    (misscan,) = d.table.alerts.open_alerts()
    assert misscan.code.value == "misscan" and d.table.paused
    return d


def test_a_misread_card_counts_out_of_a_single_source_shoe() -> None:
    d = _misread_after_one_card()
    assert d.table.shoe.cards_dealt == 2
    assert d.table.summary()["shoe"]["cards_dealt"] == 2
    (misscan,) = d.table.alerts.open_alerts()
    d.resolve(misscan.alert_id, "accept")
    assert d.table.shoe.cards_dealt == 2  # once
    d.card("7C")  # the target dealt again: the dealer's up card
    assert d.table.shoe.cards_dealt == 3
    assert d.replayed() == d.outputs


def test_a_misread_event_delivered_again_counts_once() -> None:
    d = _misread_after_one_card()
    seq = d.seq["shoe"]
    d.feed(
        "shoe.event",
        {"device": "shoe", "seq": seq, "ts": d.ts(), "event": "misread", "data": {}},
    )
    assert d.table.shoe.cards_dealt == 2


def test_on_a_camera_table_the_camera_s_sighting_counts_it_as_before() -> None:
    d = _misread_after_one_card(single_source=False)
    assert d.table.shoe.cards_dealt == 1


def test_a_run_logged_with_logic_23_replays_the_misread_uncounted() -> None:
    d = _misread_after_one_card(logic=23)
    assert d.table.shoe.cards_dealt == 1
    assert d.replayed() == d.outputs
