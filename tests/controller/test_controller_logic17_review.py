"""A review of logic 17's new paths (each fixed in logic 17 itself, unreleased).

1. The camera's card outside the deal went out with its code during betting; the burn card's
   report comes then (the shoe reads it first, which opens betting): the burn card told.
2. The shoe in play announced again mid-round (a driver re-sending its load) was held as a
   load: its cancel loaded it anew, its cards out and census forgotten, the next pack's
   count spent on it.
3. A card read from a shoe loaded mid-round, held while its load was, counted nowhere once
   the load's cancel put that shoe in play.
4. The up card reported again while the hole card lay face down became, after the turn,
   "card 9H on dealer was not scanned by the shoe", whose accept dealt 9H as the dealer's draw.
5. A held load kept the count of its moment: a correct count arriving after it was overwritten
   on cancel (the shoe out of play), a wrong one ignored.
"""

from __future__ import annotations

from typing import Any

from logic17_support import Recorder, open_round


def _outside(d: Recorder) -> list[dict[str, Any]]:
    return [e["data"] for e in d.events if e["type"] == "camera_card_outside_deal"]


# ------------------------------------------------------------------ 1. the burn card


def test_the_camera_s_report_of_the_burn_card_during_betting_does_not_tell_it() -> None:
    d = Recorder({"preset": "clubhouse", "shoe": {"burn": "each_round"}})
    d.shuffle()
    d.load()
    d.tick(0.1)
    assert d.table.phase == "burning"
    d.card("5H")  # the shoe reads the burn card: betting opens
    assert d.table.phase == "betting"
    d.camera("5H", "dealer")  # the camera's report of it, a moment later
    [seen] = _outside(d)
    assert (seen["card"], seen["zone"], seen["phase"]) == ("??", "dealer", "betting")
    assert "5H" not in str(d.events)
    assert d.replayed() == d.outputs


def test_a_logic_16_run_still_drops_the_camera_s_card_outside_the_deal() -> None:
    d = Recorder({"preset": "clubhouse", "shoe": {"burn": "each_round"}}, logic=16)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.card("5H")
    d.camera("5H", "dealer")
    assert _outside(d) == []
    assert d.replayed() == d.outputs


# ------------------------------------------------------------------ 2. the same shoe again


def _s1_announced_again(logic: int = 17) -> Recorder:
    d = Recorder({"preset": "clubhouse", "shoe": {"decks": 1}}, logic=logic, single_source=True)
    open_round(d, 1, decks=1)
    d.card("AS")
    d.card("9H")
    d.shuffle(1)  # the next pack, counted during play
    d.load("S1")  # the shoe in play announced again (a driver reconnecting)
    return d


def test_the_shoe_in_play_announced_again_mid_round_is_logged_only() -> None:
    d = _s1_announced_again()
    assert d.raised() == [] and not d.table.paused
    [again] = [e["data"] for e in d.events if e["type"] == "shoe_load_repeated"]
    assert again["shoe"] == "S1"
    shoe = d.table.shoe
    assert (shoe.shoe_id, shoe.cards_dealt, shoe.dealt["AS"]) == ("S1", 2, 1)
    assert d.table.shuffle_verified  # the next pack's count is not spent on S1
    d.card("6D")
    d.card("AS")  # a second AS from a one-deck shoe
    assert [a["code"] for a in d.raised()] == ["impossible_card"]
    assert d.replayed() == d.outputs


def test_a_logic_16_run_raises_the_load_alert_as_it_was_played() -> None:
    d = _s1_announced_again(logic=16)
    [alert] = d.raised()
    assert alert["code"] == "integrity" and "S1 loaded during round" in alert["message"]
    d.resolve(alert["alert_id"], "cancel")
    assert d.table.shoe.cards_dealt == 2  # dropped: S1 stays as it was
    assert d.replayed() == d.outputs


def test_a_load_held_announced_again_is_one_alert() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    d.card("TS")
    d.shuffle()
    d.load("S2")
    d.load("S2")  # the driver re-sends it
    assert [a["code"] for a in d.raised()] == ["integrity"]
    assert [e["data"]["shoe"] for e in d.events if e["type"] == "shoe_load_repeated"] == ["S2"]
    d.resolve(d.raised()[0]["alert_id"], "cancel")
    assert d.table.shoe.shoe_id == "S2" and not d.table.shoe.out_of_play
    assert d.replayed() == d.outputs


# ------------------------------------------------------------------ 3. held cards of the new shoe


def _s2_card(d: Recorder, code: str) -> None:
    d.feed(
        "shoe.card",
        {
            "device": "shoe",
            "seq": d.device("shoe"),
            "ts": d.ts(),
            "card": code,
            "shoe": "S2",
            "serial": None,
        },
    )


def _s2_card_held(order: str) -> Recorder:
    d = Recorder({"preset": "clubhouse", "shoe": {"decks": 1}}, single_source=True)
    open_round(d, 1, decks=1)
    d.card("TS")
    d.card("9H")
    d.shuffle(1)
    d.load("S2")  # put in mid-round: the alert pauses
    _s2_card(d, "AS")  # the dealer draws on, from S2
    load, held = (a["alert_id"] for a in d.raised())
    steps = [(load, "cancel"), (held, "void")]
    for alert_id, resolution in steps if order == "load_first" else steps[::-1]:
        d.resolve(alert_id, resolution)
    d.tick(2)
    return d


def _counted_in_s2(d: Recorder) -> None:
    shoe = d.table.shoe
    assert (shoe.shoe_id, shoe.cards_dealt, shoe.dealt["AS"]) == ("S2", 1, 1)
    d.bet(1, "p1", cid="bet-2")
    d.tick(40)
    _s2_card(d, "AS")  # S2's only AS again
    assert d.raised()[-1]["code"] == "impossible_card"
    assert d.replayed() == d.outputs


def test_a_card_of_the_new_shoe_held_then_voided_counts_in_it_once() -> None:
    _counted_in_s2(_s2_card_held("void_first"))


def test_a_card_of_the_new_shoe_voided_after_the_load_counts_in_it_once() -> None:
    _counted_in_s2(_s2_card_held("load_first"))


# ------------------------------------------------------------------ 4. the up card again


def test_a_second_sighting_of_the_up_cards_code_stays_a_card_the_shoe_never_scanned() -> None:
    """The up card seen again while the hole card lay face down, or a second 9H of a
    multi-deck shoe on the dealer box: the sightings cannot tell them apart, so the manager
    does. Taken for a repeat (a first fix), a review's second card the shoe never read went
    unalerted."""
    d = Recorder()
    open_round(d, 1)
    d.card("TS")
    d.camera("TS", "seat:1")
    d.card("9H")
    d.camera("9H", "dealer")
    d.card("6D")
    d.camera("6D", "seat:1")
    d.card("7C")  # the hole card, face down
    d.camera("9H", "dealer")  # 9H once more: the up card again, or another 9H
    d.tick(3.5)
    d.decide(1, "stand", "s1")
    d.tick(0.3)
    d.camera("7C", "dealer")  # the hole card turned, seen right
    d.tick(3.5)
    assert [(a["code"], a["message"]) for a in d.raised()] == [
        ("misscan", "card 9H on dealer was not scanned by the shoe")
    ]
    assert d.replayed() == d.outputs


# ------------------------------------------------------------------ 5. a count after the load


def _s2_loaded_unverified() -> Recorder:
    d = Recorder(single_source=True)
    open_round(d, 1)
    d.card("TS")
    d.load("S2")  # no count yet for S2
    return d


def test_a_correct_count_after_a_held_load_verifies_it_on_cancel() -> None:
    d = _s2_loaded_unverified()
    d.shuffle()  # S2's count, arriving after its load
    [load] = d.raised()
    d.resolve(load["alert_id"], "cancel")
    assert d.table.shoe.shoe_id == "S2" and not d.table.shoe.out_of_play
    assert [a["code"] for a in d.raised()] == ["integrity"]
    assert not d.table.shuffle_verified  # spent on S2
    assert d.table.phase == "betting"
    assert d.replayed() == d.outputs


def test_a_wrong_count_after_a_verified_held_load_takes_it_out_of_play_on_cancel() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    d.card("TS")
    d.shuffle()
    d.load("S2")  # verified at its load
    d.shuffle(count=415)  # then a wrong count
    load = next(a for a in d.raised() if a["code"] == "integrity")
    d.resolve(load["alert_id"], "cancel")
    assert d.table.shoe.shoe_id == "S2" and d.table.shoe.out_of_play
    assert d.raised()[-1]["code"] == "shuffler_count_mismatch"
    assert d.replayed() == d.outputs
