"""A command that comes after the players' deadline meets the deadline first (table logic
18): betting closes, or the decision pending takes its default, and the command is judged
after. The deadline is kept by the service's timer input, late on a loaded machine: a
stress review saw 109 bets taken up to 3.4 s after the published `deadline`, and a double
2.6 s after, its money added."""

from __future__ import annotations

from test_controller_table import Driver

from studio.controller.table import LOGIC


def _answer(d: Driver, cid: str) -> tuple[str, dict[str, object]]:
    event = next(
        e for e in d.events if e["type"].startswith("command_") and e["data"].get("id") == cid
    )
    return event["type"], event["data"]


def test_a_bet_after_the_betting_deadline_is_refused() -> None:
    for logic, taken in [(LOGIC, False), (17, True)]:
        d = Driver("classic6", single_source=True)
        d.table.logic = logic
        d.shuffle(decks=6)
        d.load()
        d.tick(0.1)
        d.bet(1, "p1")
        late = {"id": "late", "type": "bet", "seat": 2, "player": "p2", "stake": "10"}
        d.feed("game.command", late, dt=40)  # 10 s past the 30 s window, no timer between
        kind, data = _answer(d, "late")
        assert (kind == "command_accepted") is taken, logic
        if not taken:
            assert data["reason"] == "bets are closed (phase dealing)"
            closed = next(e for e in d.events if e["type"] == "betting_closed")
            assert [w["player"] for w in closed["data"]["wagers"]] == ["p1"]


def test_a_decision_after_its_deadline_meets_the_default_first() -> None:
    d = Driver("classic6", single_source=True)
    d.shuffle(decks=6)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1", consent_auto=False)
    d.tick(31)
    for code in ["5S", "TD", "6C", "6D"]:  # 11 against 6
        d.card(code)
    deadline = d.table.decision_deadline
    assert deadline is not None
    late = {"id": "late", "type": "decision", "seat": 1, "player": "p1", "action": "double"}
    d.feed("game.command", late, dt=(deadline - d.now).total_seconds() + 5)
    timeout = next(e["data"] for e in d.events if e["type"] == "timeout_default")
    assert timeout["applied"]["actions"][0]["action"].startswith("hit (timeout")
    kind, data = _answer(d, "late")
    assert kind == "command_rejected" and data["reason"] == "a card is due before any decision"
    assert d.table.engine is not None
    assert d.table.engine.round.boxes[1].wagers[0].hand_stakes[0].total == 10


def test_a_bet_taken_within_the_grace_after_the_deadline_is_in_time() -> None:
    """A command's time is when it gets its turn at the table: one that waited behind
    others (a slow database write) is not refused for that within COMMAND_DEADLINE_GRACE
    (a review: a bet sent 0.5 s before the deadline was refused behind a 1 s write)."""
    d = Driver("classic6", single_source=True)
    d.shuffle(decks=6)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    deadline = d.table.betting_deadline
    assert deadline is not None
    waited = {"id": "waited", "type": "bet", "seat": 2, "player": "p2", "stake": "10"}
    d.feed("game.command", waited, dt=(deadline - d.now).total_seconds() + 1.5)
    assert _answer(d, "waited")[0] == "command_accepted"
