"""A correction or a void does not give a player a decision back once the hole card was
shown (table logic 16).

Seat 1 holds TH and a card the shoe read 6C (the camera saw 5C) against the dealer's 7S,
hole card 9D; seat 1 hits, 5D: 21 as read, the dealer's turn, ``hole_card_revealed`` 9D.
Corrected to 5C, seat 1 holds 20 and the round was rebuilt back in the players' turn: hit
or stand pending, the hole card shown as ``??`` again, and the player's ``stand`` taken
knowing the dealer holds 16 (a reviewer's walk-through). Likewise a void of the hit card
re-dealt it and took a ``hit`` against a hole card already published. Now both are refused
("cancel the round instead"); up to logic 15 they were taken.
"""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError
from studio.controller.table import LOGIC

WINDOW = 3.0


def _to_the_dealer_s_turn(logic: int, *, camera_sees_hit: bool) -> Driver:
    d = Driver()
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    start_round(d, 1)
    d.card("TH")
    d.camera("TH", "seat:1")
    d.card("7S")
    d.camera("7S", "dealer")
    d.card("6C")
    d.camera("5C" if camera_sees_hit else "6C", "seat:1")  # the shoe misread 5C as 6C
    d.card("9D")  # the hole card, face down
    d.decide(1, "hit", "h1")
    d.card("5D")  # 21 as read: the dealer's turn
    if camera_sees_hit:
        d.camera("5D", "seat:1")
    else:
        d.camera("9D", "dealer")  # the hole card turned over; the hit card unseen
    revealed = [e["data"] for e in d.events if e["type"] == "hole_card_revealed"]
    assert revealed == [{"card": "9D", "index": 4}]
    d.tick(WINDOW + 0.5)
    return d


def _alert(d: Driver, code: str) -> str:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == code]
    return alert.alert_id


def test_a_correction_that_would_reopen_the_players_turn_is_refused() -> None:
    d = _to_the_dealer_s_turn(LOGIC, camera_sees_hit=True)
    mismatch = _alert(d, "card_mismatch")
    cards = [c.code for c in d.table.cards]
    with pytest.raises(AlertError, match="cancel the round instead"):
        d.manager(
            verb="resolve", alert_id=mismatch, resolution="correct", card="5C", reason="camera"
        )
    assert [c.code for c in d.table.cards] == cards  # nothing changed
    assert d.table.engine is not None and d.table.engine.hole_card_shown()
    assert d.table.engine.pending() is None
    d.manager(verb="resolve", alert_id=mismatch, resolution="cancel", reason="misread")
    assert d.table.phase == "settled"


def test_a_void_that_would_reopen_the_players_turn_is_refused() -> None:
    d = _to_the_dealer_s_turn(LOGIC, camera_sees_hit=False)
    misscan = _alert(d, "misscan")
    with pytest.raises(AlertError, match="cancel the round instead"):
        d.manager(verb="resolve", alert_id=misscan, resolution="void", reason="not there")
    assert [c.code for c in d.table.cards] == ["TH", "7S", "6C", "9D", "5D"]
    assert d.table.next_card() == {"kind": "dealer_draw"}  # not seat 1's card again


def test_a_correction_in_the_dealer_s_turn_that_keeps_it_is_taken() -> None:
    d = Driver()
    start_round(d, 1)
    for code, zone in [("TH", "seat:1"), ("7S", "dealer"), ("9C", "seat:1")]:
        d.card(code)
        d.camera(code, zone)
    d.card("9D")
    d.decide(1, "stand", "s1")  # 19: the dealer's turn, 16
    d.camera("9D", "dealer")
    d.card("2H")
    d.camera("3H", "dealer")  # the dealer's draw misread
    d.tick(WINDOW + 0.5)
    mismatch = _alert(d, "card_mismatch")
    d.manager(verb="resolve", alert_id=mismatch, resolution="correct", card="3H", reason="cam")
    assert [c.code for c in d.table.cards] == ["TH", "7S", "9C", "9D", "3H"]


@pytest.mark.parametrize("camera_sees_hit", [True, False])
def test_logic_15_replays_the_change_as_it_was_taken(camera_sees_hit: bool) -> None:
    d = _to_the_dealer_s_turn(15, camera_sees_hit=camera_sees_hit)
    if camera_sees_hit:
        alert = _alert(d, "card_mismatch")
        d.manager(verb="resolve", alert_id=alert, resolution="correct", card="5C", reason="cam")
    else:
        alert = _alert(d, "misscan")
        d.manager(verb="resolve", alert_id=alert, resolution="void", reason="not there")
    assert d.table.engine is not None and not d.table.engine.hole_card_shown()
    again = None if camera_sees_hit else {"kind": "seat", "seat": 1, "hand": 0}
    assert d.table.next_card() == again
