"""Every card out of the shoe counts toward the cut point at once (table logic 4).

The rule set's cut point is the backstop for a cut card the sensor missed: the engine of
each round places it at the cards dealt before the round plus the cards it took itself.
Up to logic 3 the shoe's count was the census's (the codes that make a card impossible),
so a card that left the shoe but did not reach the round's engine counted late or never:

- refused (no card due, or the engine refused it), drawn before bets closed, held while
  paused then voided, or dealt then voided: in the census, so counted from the next round
  on, and the round that passed the cut point was not the shoe's last (one round late);
- impossible (a copy too many) and voided, or held while paused and the round cancelled:
  never in the census, so never counted.

Now the shoe counts each card by the event that showed it leave, and the engine's cut
point counts every card out of the shoe before the round's result.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_controller_cut_point import _deal_and_stand
from test_controller_table import Driver

from studio.controller.alerts import AlertError
from studio.controller.table import LOGIC
from studio.rules.replay import replay_round

# One deck cut at a tenth: the cut point is the 5th card out of the shoe.
EARLY_CUT = {"preset": "clubhouse", "shoe": {"decks": 1, "cut_card_fraction": "0.1"}}
# Seat 1's two cards, the dealer's ten up (a peek: no hole card shown) and a 7 in the hole:
# seat 1 stands on 18 and the dealer on 17; four cards, one short of the cut point.
FOUR_CARDS = ["8S", "TD", "QH", "7C"]


def _betting(logic: int = LOGIC, **table: Any) -> Driver:
    d = Driver(ruleset=EARLY_CUT, **{"single_source": True, **table})
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    d.shuffle(decks=1)
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"
    d.bet(1, "p1", cid="bet-1")
    return d


def _dealing(logic: int = LOGIC, **table: Any) -> Driver:
    d = _betting(logic, **table)
    d.tick(20)
    assert d.table.phase == "dealing"
    return d


def _resolve(d: Driver, code: str, resolution: str) -> None:
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == code]
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution=resolution, reason="test")


def _ended(d: Driver) -> dict[str, Any]:
    """The round's result (settled or cancelled)."""
    event = next(e for e in reversed(d.events) if e["type"] in ("round_settled", "round_cancelled"))
    data = event["data"]
    return dict(data["result"] if event["type"] == "round_settled" else data["refunds"])


def _next_round_ends_the_shoe(d: Driver) -> None:
    """The shoe played on: its next round, already past the cut point, is its last."""
    d.tick(1.5)
    assert d.table.phase == "betting"
    d.bet(1, "p1", cid="bet-2")
    d.tick(20)
    ended = _deal_and_stand(d, iter(["9S", "KD", "JH", "7D"]))
    assert ended["data"]["result"]["reshuffle_after_round"] is True


def _shoe_ends_after_this_round(d: Driver) -> None:
    assert d.table.shoe.cards_dealt == 5
    assert _ended(d)["reshuffle_after_round"] is True
    assert d.table.phase == "shoe_change"
    d.tick(d.table.cut_card_grace)
    assert [a["code"] for a in d.alerts if a["code"] == "cut_card_missing"] == ["cut_card_missing"]


def _stray_card_while_deciding(d: Driver) -> None:
    """The four cards, then a fifth drawn while seat 1's decision is due: refused."""
    for code in FOUR_CARDS:
        d.card(code)
    assert d.table.next_card() is None and d.table.engine is not None
    d.card("2H")
    assert d.alerts[-1]["code"] == "unexpected_card" and d.table.paused


def test_a_refused_card_ends_the_shoe_at_the_end_of_its_round() -> None:
    d = _dealing()
    _stray_card_while_deciding(d)
    assert d.table.shoe.cards_dealt == 5  # at once, while the alert is open
    _resolve(d, "unexpected_card", "void")
    _deal_and_stand(d, iter([]))
    _shoe_ends_after_this_round(d)
    assert d.table.shoe.dealt["2H"] == 1  # it left the shoe: a second 2H is impossible


def test_a_run_of_logic_3_replays_a_refused_card_as_it_was_played() -> None:
    d = _dealing(logic=3)
    _stray_card_while_deciding(d)
    _resolve(d, "unexpected_card", "void")
    ended = _deal_and_stand(d, iter([]))
    assert ended["data"]["result"]["reshuffle_after_round"] is False  # a round late
    _next_round_ends_the_shoe(d)


def test_an_impossible_card_voided_counts_toward_the_cut_point() -> None:
    d = _dealing()
    d.card("8S")
    d.card("8S")  # a second 8S in a one-deck shoe: its code is not taken
    assert d.alerts[-1]["code"] == "impossible_card"
    assert d.table.shoe.cards_dealt == 2
    _resolve(d, "impossible_card", "void")
    _deal_and_stand(d, iter(FOUR_CARDS[1:]))
    _shoe_ends_after_this_round(d)
    assert d.table.shoe.dealt["8S"] == 1  # the census: only the card it could be


def test_a_run_of_logic_3_replays_an_impossible_card_as_never_counted() -> None:
    d = _dealing(logic=3)
    d.card("8S")
    d.card("8S")
    _resolve(d, "impossible_card", "void")
    ended = _deal_and_stand(d, iter(FOUR_CARDS[1:]))
    assert ended["data"]["result"]["reshuffle_after_round"] is False
    assert d.table.shoe.cards_dealt == 4


def test_a_card_drawn_before_bets_closed_counts_in_its_round() -> None:
    d = _betting()
    d.card("2H")
    assert d.alerts[-1]["code"] == "game_before_time"
    _resolve(d, "game_before_time", "void")
    d.tick(20)
    _deal_and_stand(d, iter(FOUR_CARDS))
    _shoe_ends_after_this_round(d)


def test_a_card_held_while_paused_and_voided_counts_in_its_round() -> None:
    d = _dealing()
    d.card("8S")
    d.manager(verb="pause", reason="supervisor check")
    d.card("2H")  # held: not due while paused
    assert d.alerts[-1]["code"] == "unexpected_card"
    assert d.table.shoe.cards_dealt == 2
    d.manager(verb="resume", reason="check done")
    _resolve(d, "unexpected_card", "void")
    _deal_and_stand(d, iter(FOUR_CARDS[1:]))
    _shoe_ends_after_this_round(d)


def test_a_card_held_while_paused_counts_when_its_round_is_cancelled() -> None:
    d = _dealing()
    for code in FOUR_CARDS:
        d.card(code)
    d.manager(verb="pause", reason="supervisor check")
    d.card("2H")
    d.manager(verb="resume", reason="check done")
    _resolve(d, "unexpected_card", "cancel")
    assert "round_cancelled" in d.types()
    _shoe_ends_after_this_round(d)


def test_a_dealt_card_voided_still_counts_in_its_round() -> None:
    d = _dealing(single_source=False)
    d.card("8S")
    d.camera("8S", "seat:1")
    d.camera("7C", "dealer")
    d.card("7D")  # the dealer's up card: the camera read another card
    d.tick(3.5)
    _resolve(d, "card_mismatch", "void")
    assert [c.code for c in d.table.cards] == ["8S"]
    assert d.table.shoe.cards_dealt == 2
    for code, zone in [("TD", "dealer"), ("QH", "seat:1")]:
        d.card(code)
        d.camera(code, zone)
    d.card("7C")  # the hole card, face down
    d.decide(1, "stand", "stand-1")
    d.camera("7C", "dealer")  # turned over
    d.tick(3.5)
    _shoe_ends_after_this_round(d)
    assert d.table.shoe.dealt["7D"] == 1  # the voided card left the shoe as read


@pytest.mark.parametrize(("logic", "census"), [(LOGIC, 1), (3, 2)])
def test_a_card_held_by_the_shoe_and_the_camera_counts_once_when_both_are_voided(
    logic: int, census: int
) -> None:
    d = _dealing(logic, single_source=False)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")  # drawn while paused: the shoe's read is held
    d.camera("TH", "seat:1")
    d.tick(3.5)  # the camera's sighting has no scan to pair with: held too
    d.manager(verb="resume", reason="check done")
    _resolve(d, "unexpected_card", "void")
    _resolve(d, "misscan", "void")
    assert d.table.shoe.cards_out == 1
    # Logic 3 (as a run of it replays): twice, and the shoe's last real TH was refused.
    assert d.table.shoe.dealt["TH"] == census


def test_a_card_only_the_camera_saw_counts_once_a_manager_takes_it() -> None:
    d = _dealing(single_source=False)
    d.camera("8S", "seat:1")  # the shoe never scanned it
    d.tick(3.5)
    assert d.alerts[-1]["code"] == "misscan"
    assert d.table.shoe.cards_dealt == 0  # the camera alone: perhaps a card moved
    _resolve(d, "misscan", "accept")
    assert [c.code for c in d.table.cards] == ["8S"]
    assert d.table.shoe.cards_dealt == 1


def test_burns_count_once() -> None:
    burn = {"preset": "clubhouse", "shoe": {**EARLY_CUT["shoe"], "burn": "new_shoe"}}
    d = Driver(ruleset=burn, single_source=True)
    d.shuffle(decks=1)
    d.load()
    d.tick(0.1)
    assert d.table.next_card() == {"kind": "burn"}  # before betting opens (logic 9)
    d.card("5H")
    d.bet(1, "p1")
    d.tick(20)
    ended = _deal_and_stand(d, iter(FOUR_CARDS))
    assert ended["data"]["result"]["burned"] == ["5H"]
    assert d.table.shoe.cards_dealt == 5
    assert ended["data"]["result"]["reshuffle_after_round"] is True


def test_a_new_shoe_starts_its_count_at_nothing() -> None:
    d = _dealing()
    _stray_card_while_deciding(d)
    _resolve(d, "unexpected_card", "void")
    _deal_and_stand(d, iter([]))
    d.card("3C")  # a stray card of the old shoe after its last round
    _resolve(d, "dealer_rule_violation", "void")
    assert d.table.shoe.cards_dealt == 6
    d.shuffle(decks=1)
    d.load("S2")
    assert d.table.shoe.cards_dealt == 0 and not d.table.shoe.dealt


def _next_shoe_with_a_held_card_left_open(held_from: str, logic: int = LOGIC) -> Driver:
    """A round cancelled while an alert holding a card is left open, and the next shoe
    loaded: the card the camera alone saw, or the shoe's read of one drawn while paused."""
    d = _dealing(logic, single_source=False)
    d.card("8S")
    d.camera("8S", "seat:1")
    if held_from == "camera":
        d.camera("9D", "dealer")  # the shoe never scanned it
        d.tick(3.5)
        assert d.alerts[-1]["code"] == "misscan"
    else:
        d.manager(verb="pause", reason="supervisor check")
        d.card("4C")
        assert d.alerts[-1]["code"] == "unexpected_card"
    d.manager(verb="cancel_round", reason="table closed")
    d.manager(verb="shoe_change", reason="end of the shoe")
    d.shuffle(decks=1)
    d.load("S2")
    if held_from == "shoe":  # paused by a manager (logic 14 refuses a resume of no pause)
        d.manager(verb="resume", reason="new shoe")
    assert d.table.shoe.shoe_id == "S2" and d.table.shoe.cards_out == 0
    return d


@pytest.mark.parametrize("held_from", ["camera", "shoe"])
def test_a_card_held_in_the_last_shoe_is_not_counted_in_the_next(held_from: str) -> None:
    d = _next_shoe_with_a_held_card_left_open(held_from)
    (left,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=left.alert_id, resolution="void", reason="old shoe's")
    # The card left shoe S1: S2's penetration and census know nothing of it (before, the
    # camera's card counted in S2's penetration, and either went into S2's census, where
    # S2's own copy of it, in this one-deck shoe, would have been refused as impossible).
    assert d.table.shoe.cards_out == 0
    assert not d.table.shoe.dealt


@pytest.mark.parametrize(("held_from", "card"), [("camera", "9D"), ("shoe", "4C")])
def test_a_run_of_logic_3_replays_a_card_of_the_last_shoe_in_the_next_census(
    held_from: str, card: str
) -> None:
    d = _next_shoe_with_a_held_card_left_open(held_from, logic=3)
    (left,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=left.alert_id, resolution="void", reason="old shoe's")
    assert d.table.shoe.dealt == {card: 1} and d.table.shoe.cards_dealt == 1


def _held_by_the_shoe_and_the_camera(logic: int = LOGIC) -> Driver:
    d = _dealing(logic, single_source=False)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")  # drawn while paused: the shoe's read is held
    d.camera("TH", "seat:1")
    d.tick(3.5)  # the camera's sighting of it, with no scan to pair with: held too
    d.manager(verb="resume", reason="check done")
    return d


TWINS = [("misscan", "unexpected_card"), ("unexpected_card", "misscan")]


@pytest.mark.parametrize(("voided", "accepted"), TWINS)
def test_a_card_held_by_the_shoe_and_the_camera_voided_once_and_accepted_is_in_the_census_once(
    voided: str, accepted: str
) -> None:
    d = _held_by_the_shoe_and_the_camera()
    _resolve(d, voided, "void")  # the other source's hold is that card: it is dealt
    _resolve(d, accepted, "accept")  # before: refused, "TH would be copy 2 in a 1-deck shoe"
    assert [c.code for c in d.table.cards] == ["TH"]
    assert d.table.shoe.dealt["TH"] == 1 and d.table.shoe.cards_out == 1


@pytest.mark.parametrize(("voided", "accepted"), TWINS)
def test_a_run_of_logic_3_replays_a_twin_voided_then_accepted_as_refused(
    voided: str, accepted: str
) -> None:
    d = _held_by_the_shoe_and_the_camera(logic=3)
    _resolve(d, voided, "void")
    with pytest.raises(AlertError, match="TH would be copy 2"):
        _resolve(d, accepted, "accept")
    assert d.table.shoe.dealt["TH"] == 1 and not d.table.cards


def test_the_round_result_logs_where_the_engine_placed_the_shoe_so_its_replay_agrees() -> None:
    """``studio replay`` of a round needs the ``shoe_cards_dealt`` its engine's cut point
    read. From logic 4 that is not the cards out before the round (a refused card of the
    round is in it too), and no logged output said what it was: a replay document built
    from the round's record gave ``reshuffle_after_round: false`` for a round that ended
    the shoe. Now the round's result event carries the engine's ``round_config``."""
    d = _dealing()
    _stray_card_while_deciding(d)
    _resolve(d, "unexpected_card", "void")
    _deal_and_stand(d, iter([]))
    settled = next(e for e in reversed(d.events) if e["type"] == "round_settled")
    config = settled["data"]["round_config"]
    assert config == {"shoe_cards_dealt": 1, "new_shoe": True}  # the refused 2H
    document = {
        "ruleset": EARLY_CUT,
        **config,
        "boxes": [{"seat": 1, "wagers": [{"player": "p1", "stake": "10.00"}]}],
        "cards": FOUR_CARDS,
        "decisions": {"1": ["stand"]},
    }
    replayed = replay_round(document)
    assert replayed["reshuffle_after_round"] is True
    assert {k: v for k, v in replayed.items() if k != "events"} == settled["data"]["result"]


def test_a_cancelled_round_logs_its_engine_config_too() -> None:
    d = _dealing()
    _stray_card_while_deciding(d)
    _resolve(d, "unexpected_card", "cancel")
    cancelled = next(e for e in reversed(d.events) if e["type"] == "round_cancelled")
    assert cancelled["data"]["round_config"] == {"shoe_cards_dealt": 1, "new_shoe": True}


def test_a_run_of_logic_3_logs_its_round_result_as_it_did() -> None:
    d = _dealing(logic=3)
    _deal_and_stand(d, iter(FOUR_CARDS))
    settled = next(e for e in reversed(d.events) if e["type"] == "round_settled")
    assert set(settled["data"]) == {"result", "flags"}


def test_the_shoes_late_read_of_a_camera_only_card_accepted_counts_once() -> None:
    """The shoe's read arriving within the cross-check window after the camera's sighting
    of that card was accepted is that card: before, nothing paired it with the accepted
    sighting, so the penetration counted one card twice (and, in a multi-deck shoe, the
    read was dealt to the next target and went into the census twice, as up to logic 3)."""
    d = _dealing(single_source=False)
    d.camera("8S", "seat:1")  # the shoe's read of it is late
    d.tick(3.5)
    _resolve(d, "misscan", "accept")
    assert d.table.shoe.cards_out == 1
    d.card("8S")  # the shoe's read of that card, late (before: refused as a second 8S)
    assert d.table.shoe.cards_out == 1
    assert "late_shoe_read" in d.types() and not d.table.paused
    assert d.table.shoe.dealt["8S"] == 1 and [c.code for c in d.table.cards] == ["8S"]


def test_a_run_of_logic_3_replays_the_late_read_of_an_accepted_camera_card_as_impossible() -> None:
    d = _dealing(3, single_source=False)
    d.camera("8S", "seat:1")
    d.tick(3.5)
    _resolve(d, "misscan", "accept")
    d.card("8S")
    assert d.alerts[-1]["message"] == "impossible card: 8S would be copy 2 in a 1-deck shoe"
    assert d.table.shoe.cards_out == 2
