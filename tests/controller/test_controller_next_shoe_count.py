"""A wrong shuffler count while a shoe is in play is the next shoe's (logic 17).

A review: the shuffler, preparing the next shoe while a round was dealt, reported a short
count; up to 16 that took the shoe in play, counted right at its load, out of play, and the
table changed it after the round (at once between rounds). The shuffler counts the cards it
shuffles; the shoe in play left it before its load. From logic 17 such a count is the next
shoe's: the alert says so, the shoe in play plays on, and no count verifies the next load
until a fresh one does. A count a load waits for (the load came first) is still that shoe's.
"""

from __future__ import annotations

from logic17_support import Recorder, open_round


def _short_count(d: Recorder) -> None:
    d.shuffle(count=415)
    [alert] = [a for a in d.raised() if a["code"] == "shuffler_count_mismatch"]
    assert "next shoe" in alert["message"]
    assert not d.table.shoe.out_of_play and not d.table.shuffle_verified
    d.resolve(alert["alert_id"], "accept")


def test_a_wrong_count_during_a_round_leaves_the_shoe_in_play() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    for code in ["TS", "9H", "6D", "7C"]:
        d.card(code)
    _short_count(d)
    d.decide(1, "stand", "s1")  # 16 against the dealer's 16
    d.card("8C")
    assert "round_settled" in d.types()
    d.tick(2)
    assert d.table.phase == "betting" and d.table.shoe.shoe_id == "S1"  # up to 16: shoe_change
    assert d.replayed() == d.outputs


def test_a_wrong_count_between_rounds_leaves_the_shoe_in_play() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    for code in ["TH", "7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "settled"
    _short_count(d)
    assert d.table.phase == "settled"  # up to 16: shoe_change at once
    d.tick(2)
    assert d.table.phase == "betting"
    assert d.replayed() == d.outputs


def test_the_next_shoe_loaded_after_a_wrong_count_is_out_of_play() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    d.manager(verb="shoe_change", reason="last round")
    for code in ["TH", "7C", "9D", "TS"]:
        d.card(code)
    _short_count(d)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "shoe_change"
    d.load("S2")  # the cards counted short, loaded all the same
    d.tick(6)
    assert d.table.shoe.shoe_id == "S2" and d.table.shoe.out_of_play
    assert d.raised()[-1]["code"] == "shuffler_count_mismatch"
    assert d.replayed() == d.outputs


def test_a_wrong_count_a_load_waits_for_is_that_shoes() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    for code in ["TH", "7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "settled"
    d.load("S2")  # between rounds, before its count
    assert "shoe_load_pending" in d.types()
    d.shuffle(count=415)  # the count it waited for
    [alert] = [a for a in d.raised() if a["code"] == "shuffler_count_mismatch"]
    assert "deck out of play" in alert["message"] and d.table.shoe.out_of_play
    assert d.replayed() == d.outputs
