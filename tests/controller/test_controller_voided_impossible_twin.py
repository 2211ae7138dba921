"""A card held twice, its shoe read refused as impossible and voided, then its camera hold
accepted (or voided), is in the census once (table logic 16).

Seat 1's TH carries serial S1; the dealer's card, read 7C with serial S1 again (a misread
serial), is held as an ``impossible_card``, and the camera's sighting of 7C, never paired
with a shoe read that was not dealt, becomes a ``misscan`` holding it. Voiding an impossible
card does not put it in the census; up to logic 15 its twin accepted was taken as counted
by that void and uncounted: 7C dealt, and not in the census (a reviewer's walk-through).
Voided too, the camera's hold did not count it either.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round

from studio.controller.table import LOGIC

WINDOW = 3.0


def _held_twice(logic: int) -> Driver:
    d = Driver()
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    start_round(d, 1)
    d.card("TH", serial="S1")
    d.camera("TH", "seat:1")
    d.card("7C", serial="S1")  # a serial dealt already: impossible, held
    d.camera("7C", "dealer")
    d.tick(WINDOW + 0.5)
    impossible = _open(d, "impossible_card")
    d.manager(verb="resolve", alert_id=impossible, resolution="void", reason="misread serial")
    assert d.table.shoe.dealt["7C"] == 0  # an impossible card voided is not in the census
    return d


def _open(d: Driver, code: str) -> str:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == code]
    return alert.alert_id


def test_the_camera_s_hold_accepted_after_the_impossible_read_voided_is_counted() -> None:
    d = _held_twice(LOGIC)
    misscan = _open(d, "misscan")
    d.manager(verb="resolve", alert_id=misscan, resolution="accept", reason="camera saw 7C")
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    assert d.table.shoe.dealt["7C"] == 1
    assert d.table.shoe.cards_dealt == 2  # out of the shoe once


def test_the_camera_s_hold_voided_after_the_impossible_read_voided_is_counted() -> None:
    d = _held_twice(LOGIC)
    misscan = _open(d, "misscan")
    d.manager(verb="resolve", alert_id=misscan, resolution="void", reason="not dealt")
    assert [c.code for c in d.table.cards] == ["TH"]
    assert d.table.shoe.dealt["7C"] == 1  # it did leave the shoe


def test_logic_15_replays_the_card_uncounted() -> None:
    d = _held_twice(15)
    misscan = _open(d, "misscan")
    d.manager(verb="resolve", alert_id=misscan, resolution="accept", reason="camera saw 7C")
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    assert d.table.shoe.dealt["7C"] == 0
