"""Majority Rules after a split (seed 004, *Automatic Split or Double*): a player who did
not consent to automatic split and did not vote for it "will automatically follow the
right hand" and has nothing on the other; from engine logic 5 only the players with money
on a hand vote on it and count toward its majority. Up to logic 4 every seated player voted
on every hand: one with nothing on the second hand decided, at the timer, a double the
others paid for, and a tie between those with money waited for that player's vote."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "controller"))
from test_controller_table import Driver

from studio.controller.table import LOGIC as TABLE_LOGIC
from studio.controller.table import engine_logic_of
from studio.rules.errors import IllegalActionError
from studio.rules.round import LOGIC, Phase, Round
from studio.rules.ruleset import preset
from studio.rules.strategy import Action


def _split_eights(logic: int = LOGIC) -> Round:
    """Seat 1, majority_speed: p1 (consenting), p2 and p3 at 10.00; 8 8 against the dealer's
    9. p1 and p2 vote split (2 of 3, taken at once): p3, neither consenting nor voting,
    follows hand 1 only. Hand 1 (8 3) stands; hand 2 is 8 2 (10 against 9)."""
    rnd = Round(preset("majority_speed"), logic=logic)
    rnd.open_betting()
    rnd.place_wager(1, "p1", "10", auto_consent=True)
    rnd.place_wager(1, "p2", "10")
    rnd.place_wager(1, "p3", "10")
    rnd.close_betting()
    for code in ["8S", "9H", "8D", "TC"]:
        rnd.deal(code)
    rnd.vote(1, "p1", "split")
    rnd.vote(1, "p2", "split")
    rnd.deal("3C")
    rnd.vote(1, "p1", "stand")
    rnd.vote(1, "p2", "stand")
    rnd.deal("2D")
    return rnd


def _stakes_on_hand_2(rnd: Round) -> dict[str, Decimal]:
    return {w.player: w.hand_stakes[1].total for w in rnd.boxes[1].wagers}


def test_a_player_with_nothing_on_a_split_hand_cannot_vote_on_it() -> None:
    """The reviewer's case: p3's vote for double on hand 2 is refused; the timer ends with
    no vote, best strategy doubles 10 against 9, and only p1, who consented, pays for it."""
    rnd = _split_eights()
    decision = rnd.pending_decision()
    assert decision is not None and decision.hand == 1
    assert decision.eligible_voters == 2
    assert decision.voters == ("p1", "p2")  # named in the dealer prompt's target
    assert decision.as_dict()["voters"] == ["p1", "p2"]
    assert _stakes_on_hand_2(rnd) == {"p1": 10, "p2": 10, "p3": 0}
    with pytest.raises(IllegalActionError, match="p3 has no stake on seat 1 hand 2"):
        rnd.vote(1, "p3", "double")
    assert not rnd.boxes[1].votes and [e["type"] for e in rnd.events][-1] == "deal"
    rnd.timeout()
    assert rnd.boxes[1].hands[1].actions == ["double (timeout, no votes, best strategy)"]
    assert _stakes_on_hand_2(rnd) == {"p1": 20, "p2": 10, "p3": 0}
    assert Round.from_dict(rnd.to_dict()).boxes[1].hands == rnd.boxes[1].hands


def test_a_tie_between_the_players_with_money_on_the_hand_is_settled_at_once() -> None:
    """p1 double, p2 hit: both voters of hand 2 have voted, a tie, so best strategy takes
    it now (double), paid by p1 (consent) alone; p3 is not waited for."""
    rnd = _split_eights()
    rnd.vote(1, "p1", "double")
    rnd.vote(1, "p2", "hit")
    assert rnd.boxes[1].hands[1].actions == ["double (tied vote, best strategy)"]
    assert _stakes_on_hand_2(rnd) == {"p1": 20, "p2": 10, "p3": 0}
    assert rnd.pending_decision() is None  # the double's card is due


def test_a_round_of_logic_4_still_lets_every_seated_player_vote() -> None:
    """A round opened under logic 4 (and its log, replayed) plays as it did: p3 votes on
    hand 2, counts among its three voters, and p3's lone vote wins at the timer, charging
    p1 10.00 more."""
    rnd = _split_eights(logic=4)
    decision = rnd.pending_decision()
    assert decision is not None and decision.eligible_voters == 3
    assert decision.voters == ("p1", "p2", "p3")
    rnd.vote(1, "p3", "double")
    rnd.timeout()
    assert rnd.boxes[1].hands[1].actions == ["double (timeout, most votes)"]
    assert _stakes_on_hand_2(rnd) == {"p1": 20, "p2": 10, "p3": 0}
    replayed = Round.from_dict(rnd.to_dict())
    assert replayed.logic == 4
    assert replayed.boxes[1].hands == rnd.boxes[1].hands
    rnd.deal("KH")
    assert rnd.phase is Phase.COMPLETE  # the dealer's 9 T stands
    wagers = {w.player: (w.stake, w.net) for w in rnd.settle().wagers}
    assert wagers["p1"] == (Decimal("30.00"), Decimal("10.00"))


def test_a_split_hand_nobody_on_the_seat_has_money_on_is_played_by_best_strategy() -> None:
    """p1 split, p2 stand: a tie, best strategy splits 8 8 against 9, paid by nobody (no
    consent, and a tie is not the vote's choice). Hand 2 has no voter: from logic 5 it is
    played by best strategy at once (up to 4 it waited for votes that paid nothing)."""
    for logic, pending in [(LOGIC, False), (4, True)]:
        rnd = Round(preset("majority_speed"), logic=logic)
        rnd.open_betting()
        rnd.place_wager(1, "p1", "10")
        rnd.place_wager(1, "p2", "10")
        rnd.close_betting()
        for code in ["8S", "9H", "8D", "TC"]:
            rnd.deal(code)
        rnd.vote(1, "p1", "split")
        rnd.vote(1, "p2", "stand")
        assert rnd.boxes[1].hands[0].actions == ["split (tied vote, best strategy)"]
        rnd.deal("TS")
        rnd.vote(1, "p1", "stand")
        rnd.vote(1, "p2", "stand")
        rnd.deal("2D")  # hand 2: 8 2, nobody's money on it
        assert _stakes_on_hand_2(rnd) == {"p1": 0, "p2": 0}
        assert (rnd.pending_decision() is not None) is pending, logic
        if not pending:
            assert rnd.boxes[1].hands[1].actions == ["double (no stake on the hand, best strategy)"]


def _table_at_hand_2(table_logic: int) -> Driver:
    """The same round through the table controller run at ``table_logic``."""
    d = Driver("majority_speed", single_source=True)
    d.table.logic = table_logic  # the logic a replay runs for a run logged with it
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1", consent_auto=True)
    d.bet(1, "p2")
    d.bet(1, "p3")
    d.tick(20)
    for code in ["8S", "9H", "8D", "TC"]:
        d.card(code)
    for player in ("p1", "p2"):
        _vote(d, player, "split", "a")
    d.card("3C")
    for player in ("p1", "p2"):
        _vote(d, player, "stand", "b")
    d.card("2D")
    _vote(d, "p3", "double", "c")
    return d


def _vote(d: Driver, player: str, action: str, ballot: str) -> None:
    command = {"type": "vote", "seat": 1, "player": player, "action": action}
    d.feed("game.command", {"id": f"{ballot}-{player}", **command})


def test_the_table_logic_15_runs_engine_logic_5_and_14_runs_4() -> None:
    assert (engine_logic_of(TABLE_LOGIC), engine_logic_of(14)) == (LOGIC, 4)
    rejected = [
        e["data"]["reason"]
        for e in _table_at_hand_2(TABLE_LOGIC).events
        if e["type"] == "command_rejected"
    ]
    assert rejected == [
        "p3 has no stake on seat 1 hand 2 and cannot vote on it: "
        "a player who did not take the split follows the right hand"
    ]
    old = _table_at_hand_2(14)
    assert not [e for e in old.events if e["type"] == "command_rejected"]
    assert old.table.engine is not None and old.table.engine.round.logic == 4
    assert old.table.engine.round.boxes[1].votes == {"p3": Action.DOUBLE}
