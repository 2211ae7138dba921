"""Cards read outside the deal (logic 17): another shoe's during betting, the camera's.

A review: a card naming another shoe, read during betting, was taken for a card of the
loaded shoe drawn before bets closed (``game_before_time``) and counted in its census (the
check of logic 10 came after the betting one): in a one-deck shoe, voided, the loaded shoe's
own AS was then refused as copy 2. And a card the camera saw outside the deal (one pulled
during betting that the shoe missed) was dropped unsaid.
"""

from __future__ import annotations

from typing import Any

from logic17_support import Recorder

from studio.controller.table import LOGIC

ONE_DECK = {"preset": "clubhouse", "shoe": {"decks": 1}}


def _old_shoe_card_during_betting(logic: int = LOGIC) -> Recorder:
    d = Recorder(ONE_DECK, logic=logic, single_source=True)
    d.shuffle(1)
    d.load("S1")
    d.tick(0.1)
    assert d.table.phase == "betting"
    data = {"device": "shoe", "seq": d.device("shoe"), "ts": d.ts(), "card": "AS", "shoe": "S0"}
    d.feed("shoe.card", {**data, "serial": None})
    return d


def _deal_own_ace(d: Recorder) -> None:
    for alert in d.table.alerts.open_alerts():
        d.resolve(alert.alert_id, "void")
    d.bet(1, "p1")
    d.tick(40)
    assert d.table.phase == "dealing"
    d.card("AS")  # the loaded shoe's own, only AS


def test_another_shoe_s_card_read_during_betting_stays_out_of_the_census() -> None:
    d = _old_shoe_card_during_betting()
    [alert] = d.raised()
    assert (alert["code"], alert["message"]) == (
        "integrity",
        "AS read from shoe 'S0', but shoe 'S1' is in play",
    )
    assert alert["allowed_resolutions"] == ["void", "cancel"]  # nothing is due: not accepted
    assert d.table.shoe.dealt["AS"] == 0
    _deal_own_ace(d)
    assert len(d.raised()) == 1  # not "impossible card: AS would be copy 2"
    assert [c.code for c in d.table.cards] == ["AS"]
    assert d.replayed() == d.outputs


def test_a_logic_16_run_counted_it_as_it_was_played() -> None:
    d = _old_shoe_card_during_betting(logic=16)
    assert [a["code"] for a in d.raised()] == ["game_before_time"]
    _deal_own_ace(d)
    assert [a["code"] for a in d.raised()] == ["game_before_time", "impossible_card"]
    assert d.replayed() == d.outputs


def test_the_loaded_shoe_s_card_during_betting_is_still_drawn_before_time() -> None:
    d = Recorder(single_source=True)
    d.shuffle()
    d.load("S1")
    d.tick(0.1)
    d.card("AS")
    assert [a["code"] for a in d.raised()] == ["game_before_time"]
    assert d.table.shoe.dealt["AS"] == 1


def _camera_during_betting(logic: int = LOGIC) -> Recorder:
    d = Recorder(logic=logic)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.camera("TS", "seat:1")  # pulled during betting; the shoe missed it
    d.tick(5)
    return d


def _outside(d: Recorder) -> list[dict[str, Any]]:
    return [e["data"] for e in d.events if e["type"] == "camera_card_outside_deal"]


def test_a_card_the_camera_saw_during_betting_is_logged() -> None:
    d = _camera_during_betting()
    [seen] = _outside(d)
    assert (seen["card"], seen["zone"], seen["phase"]) == ("??", "seat:1", "betting")
    assert seen["source"]["device"] == "cam" and seen["source"]["seq"] == 1
    assert d.raised() == [] and d.table.phase == "betting"
    assert d.replayed() == d.outputs


def test_a_logic_16_run_dropped_it_as_it_was_played() -> None:
    d = _camera_during_betting(logic=16)
    assert _outside(d) == [] and d.raised() == []
    assert d.replayed() == d.outputs


def test_a_card_both_sources_saw_during_betting_is_one_alert() -> None:
    d = Recorder()
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.tick(5)
    assert [a["code"] for a in d.raised()] == ["game_before_time"]
    assert [s["card"] for s in _outside(d)] == ["??"]  # it may be a face-down card


def test_the_camera_s_read_during_the_burn_does_not_tell_the_burn_card() -> None:
    d = Recorder({"preset": "clubhouse", "shoe": {"burn": "each_round"}})
    d.shuffle()
    d.load()
    d.tick(0.1)
    assert d.table.phase == "burning"
    d.camera("5H", "dealer")  # a camera that saw the burn card's face
    [seen] = _outside(d)
    assert (seen["card"], seen["phase"]) == ("??", "burning")
    assert "5H" not in str(d.events)
