"""The shoe ends where the rule set says, whether or not the cut-card sensor reports it.

Before, the controller built every round's engine as if the shoe were new: the engine's
cut point never counted the cards dealt in earlier rounds, a cut card reported by the
sensor never reached the engine, and `burn: new_shoe` never burned. So a round the cut
card ended was published with `reshuffle_after_round: false`, and a shoe whose cut card
the sensor missed was dealt on to its last card. Now the engine knows where the shoe
stands; the shoe is changed after the round in which the cut card came out or the rule
set's cut point was passed, the latter with a `cut_card_missing` alert (not pausing).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from test_controller_table import Driver, start_round

from studio.cards import RANKS, SUITS

ONE_DECK = {"preset": "clubhouse", "shoe": {"decks": 1, "cut_card_fraction": "0.5"}}


def _deck(seed: int) -> Iterator[str]:
    cards = [rank + suit for rank in RANKS for suit in SUITS]
    random.Random(seed).shuffle(cards)
    return iter(cards)


def _play_round(d: Driver, cards: Iterator[str], *, shuffle: bool = False) -> dict[str, Any]:
    """Bet on seat 1, deal what is due from ``cards`` and stand; the round's end event."""
    if shuffle:
        _one_deck_shoe(d)
    else:
        d.tick(1.5)  # the gap between rounds
    assert d.table.phase == "betting", d.table.phase
    d.bet(1, "p1", cid=f"bet-{d.table.round_id}")
    d.tick(20)
    return _deal_and_stand(d, cards)


def _deal_and_stand(d: Driver, cards: Iterator[str]) -> dict[str, Any]:
    for step in range(30):  # a one-seat round takes far fewer cards and decisions
        if d.table.phase != "dealing":
            return next(e for e in reversed(d.events) if e["type"] == "round_settled")
        assert not d.table.paused, d.alerts
        if d.table.next_card() is not None:
            d.card(next(cards))
        else:
            d.decide(1, "stand", f"{d.table.round_id}-stand-{step}")
    raise AssertionError(f"round {d.table.round_id} never ended: {d.alerts}")


def _one_deck_shoe(d: Driver) -> None:
    d.shuffle(decks=1)
    d.load()
    d.tick(0.1)


def _cut_card(d: Driver) -> None:
    d.device_event("cutcard.event", "cut", "cut_card_detected")


def test_a_round_the_cut_card_ends_says_so_in_its_result() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")
    _cut_card(d)  # it came out behind the round's first card
    for code in ["7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    settled = next(e for e in d.events if e["type"] == "round_settled")
    assert settled["data"]["result"]["reshuffle_after_round"] is True
    assert d.table.phase == "shoe_change"


def test_a_cut_card_out_between_rounds_ends_the_next_round_and_says_so() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    cards = _deck(1)
    first = _play_round(d, cards, shuffle=True)
    assert first["data"]["result"]["reshuffle_after_round"] is False
    _cut_card(d)  # after the round settled: it belongs to the next one
    assert d.table.phase == "settled"
    second = _play_round(d, cards)
    assert second["data"]["result"]["reshuffle_after_round"] is True
    assert d.table.phase == "shoe_change"
    assert not [a for a in d.alerts if a["code"] == "cut_card_missing"]


def test_the_cut_point_passed_without_the_cut_card_changes_the_shoe_with_an_alert() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    cards = _deck(2)
    ended = [_play_round(d, cards, shuffle=True)]
    while d.table.phase != "shoe_change":
        assert len(ended) < 26, "the shoe was never changed"
        ended.append(_play_round(d, cards))
    dealt = d.table.shoe.cards_dealt
    # The round that crossed the 26th card (half of one deck) is the shoe's last.
    assert dealt >= 26
    assert all(not e["data"]["result"]["reshuffle_after_round"] for e in ended[:-1])
    assert ended[-1]["data"]["result"]["reshuffle_after_round"] is True
    d.tick(d.table.cut_card_grace)  # the sensor's report may trail the card a moment
    missing = [a for a in d.alerts if a["code"] == "cut_card_missing"]
    assert len(missing) == 1
    assert missing[0]["severity"] == "warning"
    assert f"{dealt} cards dealt" in missing[0]["message"]
    assert "cut point (26)" in missing[0]["message"]
    assert not d.table.paused
    assert d.table.prompt().action == "change_shoe"


def test_the_cut_card_before_the_cut_point_raises_no_missing_alert() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    cards = _deck(3)
    _play_round(d, cards, shuffle=True)
    _cut_card(d)
    for _ in range(26):
        if d.table.phase == "shoe_change":
            break
        _play_round(d, cards)
    assert d.table.phase == "shoe_change"
    assert [a["code"] for a in d.alerts] == ["cut_card"]


def test_burn_new_shoe_burns_in_the_first_round_of_each_shoe_only() -> None:
    ruleset = {"preset": "clubhouse", "shoe": {"decks": 1, "burn": "new_shoe"}}
    d = Driver(single_source=True, ruleset=ruleset)
    cards = _deck(4)
    _one_deck_shoe(d)
    assert (d.table.phase, d.table.next_card()) == ("burning", {"kind": "burn"})
    d.card(next(cards))  # the burn, before betting opens (logic 9)
    assert d.table.phase == "betting"
    d.bet(1, "p1")
    d.tick(20)
    first = _deal_and_stand(d, cards)
    assert len(first["data"]["result"]["burned"]) == 1
    second = _play_round(d, cards)
    assert second["data"]["result"]["burned"] == []


def test_a_shoe_change_asked_for_during_a_round_ends_the_shoe_after_it_and_says_so() -> None:
    d = Driver(single_source=True, ruleset=ONE_DECK)
    cards = _deck(5)
    _one_deck_shoe(d)
    d.bet(1, "p1")
    d.tick(20)
    d.manager(verb="shoe_change", reason="worn cards")
    ended = _deal_and_stand(d, cards)
    assert ended["data"]["result"]["reshuffle_after_round"] is True
    assert d.table.phase == "shoe_change"
    assert not [a for a in d.alerts if a["code"] == "cut_card_missing"]
