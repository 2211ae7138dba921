"""The cut-card sensor's report may come just after the card that ended the shoe's round.

The sensor and the shoe are two devices on two topics: the cut card comes out with a
card, and the sensor's report reaches the controller after it. When that card was the
last of a round at the rule set's cut point, the round settled first and the controller
raised `cut_card_missing` ("check the sensor") at once, although the sensor reported the
cut card a moment later; the report then raised a `cut_card` alert saying the next round
was the shoe's last, when the shoe change was already due. Now `cut_card_missing` waits
`cut_card_grace` seconds (or until the next shoe is loaded) for the sensor.
"""

from __future__ import annotations

from collections.abc import Iterator

from test_controller_cut_point import ONE_DECK, _cut_card, _deal_and_stand, _deck, _one_deck_shoe
from test_controller_table import Driver

CUT_POINT = 26  # half of one deck


def _deal_to_the_cut_point(d: Driver, cards: Iterator[str]) -> bool:
    """Play one-seat rounds until the cut point's card; True when it ended its round."""
    _one_deck_shoe(d)
    for number in range(1, 27):
        if number > 1:
            d.tick(1.5)
        assert d.table.phase == "betting", d.table.phase
        d.bet(1, "p1", cid=f"bet-{number}")
        d.tick(20)
        for step in range(30):
            if d.table.phase != "dealing":
                break
            if d.table.next_card() is None:
                d.decide(1, "stand", f"stand-{number}-{step}")
                continue
            d.card(next(cards))
            if d.table.shoe.cards_dealt == CUT_POINT:
                return d.table.phase != "dealing"
    raise AssertionError("the cut point was never reached")


def _missing(d: Driver) -> list[dict[str, object]]:
    return [a for a in d.alerts if a["code"] == "cut_card_missing"]


def test_the_sensor_reporting_just_after_the_round_s_last_card_is_not_missing() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    assert _deal_to_the_cut_point(d, _deck(0))  # seed 0: the 26th card ends its round
    assert d.table.phase == "shoe_change"
    _cut_card(d)  # the sensor's report, 0.1 s after the card
    d.tick(30)
    assert _missing(d) == []
    (cut,) = [a for a in d.alerts if a["code"] == "cut_card"]
    assert "this is the last round" not in str(cut["message"])
    assert d.table.prompt().action == "change_shoe"


def test_a_cut_card_never_reported_is_missing_after_the_grace() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    assert _deal_to_the_cut_point(d, _deck(0))
    d.tick(d.table.cut_card_grace / 2)
    assert _missing(d) == []
    d.tick(d.table.cut_card_grace)
    (missing,) = _missing(d)
    assert f"{CUT_POINT} cards dealt" in str(missing["message"])
    assert not d.table.paused


def test_a_shoe_loaded_within_the_grace_raises_the_missing_alert_for_the_old_shoe() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    assert _deal_to_the_cut_point(d, _deck(0))
    d.shuffle(decks=1)
    d.load("S2")
    (missing,) = _missing(d)
    assert f"{CUT_POINT} cards dealt from shoe S1" in str(missing["message"])
    d.tick(d.table.cut_card_grace * 2)
    assert len(_missing(d)) == 1


def _late_report_after_the_next_shoe(d: Driver) -> None:
    """A shoe ended by the sensor's cut card; the next shoe loaded; then the sensor's report
    once more (late on its topic, or a sensor not cleared) before any card of that shoe."""
    cards = _deck(11)
    _one_deck_shoe(d)
    d.bet(1, "p1", cid="bet-1")
    d.tick(20)
    d.card(next(cards))
    _cut_card(d)
    _deal_and_stand(d, cards)
    assert d.table.phase == "shoe_change"
    _one_deck_shoe(d)
    assert d.table.phase == "betting" and d.table.shoe.cards_dealt == 0
    _cut_card(d)


def test_a_cut_card_reported_before_any_card_of_the_new_shoe_is_the_old_shoe_s() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    _late_report_after_the_next_shoe(d)
    assert [a["code"] for a in d.alerts] == ["cut_card"]  # the first shoe's, not a second
    assert "cut_card_late" in d.types()
    # The new shoe plays on: its first round is not its last.
    d.bet(1, "p1", cid="bet-2")
    d.tick(20)
    ended = _deal_and_stand(d, iter(["8S", "TD", "QH", "7C"]))  # 18 against 17: no insurance
    assert ended["data"]["result"]["reshuffle_after_round"] is False
    d.tick(1.5)
    assert d.table.phase == "betting"


def test_a_run_of_logic_2_replays_a_late_report_as_it_was_played() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    d.table.logic = 2  # the logic a replay runs for a run logged with it
    _late_report_after_the_next_shoe(d)
    assert [a["code"] for a in d.alerts] == ["cut_card", "cut_card"]
    assert d.table.shoe.cut_card_seen
