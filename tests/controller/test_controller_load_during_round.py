"""A shoe loaded while a round is dealt (logic 17).

A review: up to 16 the load was dropped whichever way its `integrity` alert was resolved. The
table stayed on the old shoe S1 (its census, its penetration); after a cancel the next round
opened on S1 with S2 in the shoe, so every S2 card was held as another shoe's; and the count
that verified S2 stayed to vouch for a later load. From logic 17 the alert holds the load and
its count: cancelled, the round is refunded and S2 is in play at once; accepted (S1 back in the
shoe), the round plays on from S1, S1 is changed after it, and S2 needs a fresh count.
"""

from __future__ import annotations

from logic17_support import Recorder, open_round


def _s2_loaded_mid_round(logic: int = 17) -> Recorder:
    d = Recorder(logic=logic, single_source=True)
    open_round(d, 1)
    d.card("TS")
    d.card("9H")
    d.shuffle()  # the next shoe, counted right...
    d.load("S2")  # ...and put in the shoe while the round is dealt
    [alert] = d.raised()
    assert alert["code"] == "integrity" and "S2 loaded during round" in alert["message"]
    assert d.table.paused
    return d


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


def test_cancelled_the_round_is_refunded_and_the_new_shoe_is_in_play() -> None:
    d = _s2_loaded_mid_round()
    assert not d.table.shuffle_verified  # spent on S2: it vouches for no later load
    d.resolve(d.raised()[0]["alert_id"], "cancel")
    assert "round_cancelled" in d.types()
    assert d.table.shoe.shoe_id == "S2" and not d.table.shoe.out_of_play
    assert d.table.shoe.cards_dealt == 0 and not d.table.shuffle_verified
    opened = [e for e in d.events if e["type"] == "round_opened"]
    assert [e["data"]["shoe"] for e in opened] == ["S1", "S2"]
    assert d.table.phase == "betting"
    d.bet(1, "p1", cid="bet-2")
    d.tick(40)
    _s2_card(d, "6D")  # S2's cards are the shoe in play's
    assert d.table.cards[-1].code == "6D" and d.table.alerts.open_alerts() == []
    assert d.replayed() == d.outputs


def test_accepted_the_old_shoe_plays_the_round_out_and_is_changed_after_it() -> None:
    d = _s2_loaded_mid_round()
    d.resolve(d.raised()[0]["alert_id"], "accept")
    assert d.table.shoe.shoe_id == "S1" and not d.table.paused
    d.card("7C")  # S1's cards, back in the shoe
    d.card("9D")  # the hole card: the dealer's 18 stands
    d.decide(1, "stand", "s1")
    assert "round_settled" in d.types()
    assert d.table.phase == "shoe_change" and d.table.shoe.out_of_play
    d.tick(5)
    assert d.table.phase == "shoe_change"
    d.load("S2")  # put in again: its count was spent on the load refused
    assert "shoe_load_pending" in d.types()
    d.shuffle()  # a fresh count
    assert d.table.shoe.shoe_id == "S2" and not d.table.shoe.out_of_play
    assert d.table.phase == "betting"
    assert d.replayed() == d.outputs


def test_a_logic_16_log_replays_the_load_dropped() -> None:
    d = _s2_loaded_mid_round(logic=16)
    d.resolve(d.raised()[0]["alert_id"], "cancel")
    assert d.table.shoe.shoe_id == "S1" and d.table.shuffle_verified
    assert d.replayed() == d.outputs
