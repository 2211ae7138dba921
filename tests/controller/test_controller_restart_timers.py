"""The players' timers stop while the controller is down (table logic 22), as during a pause.

A review killed the controller (kill -9) while seat 1's decision was pending and kept it
down longer than ``decision_seconds``: 16 ms after the start, before the devices were back,
the hand was stood on by timeout, and the player's ``hit`` sent on reconnect was refused.
Betting that expired while the controller was down closed at the start: the players had no
window. The decision and the betting window pending at a start (one that checks the
devices: ``controller.started``'s ``checks_devices``) now wait for its
``controller.devices_checked`` and start again in full from it. The dealer meanwhile is
prompted to wait, with no card due (logic 20). Runs logged with logic 21 replay as played.
"""

from __future__ import annotations

from datetime import timedelta

from logic17_support import Recorder, open_round

from studio.controller.table import LOGIC, RESTART_CHECK_TEXT


def _restart(d: Recorder, down: float, logic: int = LOGIC) -> None:
    """The controller died and starts again ``down`` seconds later (its devices asked)."""
    d.feed("controller.started", {"logic": logic, "checks_devices": True}, dt=down)


def _deciding(logic: int = LOGIC) -> Recorder:
    d = Recorder(logic=logic, single_source=True)
    open_round(d, 1)
    for code in ["TH", "7C", "9D", "5S"]:  # seat, dealer up, seat, dealer hole
        d.card(code)
    assert d.table.prompt().action == "wait_decisions"
    assert d.table.decision_deadline is not None
    return d


def _defaults(d: Recorder) -> int:
    return sum(1 for e in d.events if e["type"] == "timeout_default")


def test_a_decision_overdue_at_a_restart_starts_again_in_full_after_the_check() -> None:
    d = _deciding()
    seconds = d.table.ruleset.timeouts.decision_seconds
    d.tick(seconds - 1)
    _restart(d, down=seconds + 10)  # down past the decision's end
    d.tick(0.1)
    assert _defaults(d) == 0 and d.table.decision_deadline is None
    prompt = d.table.prompt()
    assert (prompt.action, prompt.text) == ("wait", RESTART_CHECK_TEXT)
    assert d.table.state().deadline is None
    d.feed("controller.devices_checked", {})
    assert d.table.prompt().action == "wait_decisions"
    assert d.table.decision_deadline == d.now + timedelta(seconds=seconds)
    d.tick(seconds - 0.5)
    assert _defaults(d) == 0
    d.decide(1, "hit", "c1")  # the player, back, plays the hand
    assert not [e for e in d.events if e["type"] == "command_rejected"]
    assert d.table.prompt().action == "deal"
    assert d.replayed() == d.outputs


def test_betting_expired_while_down_opens_again_in_full_after_the_check() -> None:
    d = Recorder(single_source=True)
    d.shuffle(8)
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"
    d.bet(1, "p1")
    seconds = d.table.ruleset.timeouts.betting_seconds
    _restart(d, down=seconds + 5)
    d.tick(0.1)
    assert d.table.phase == "betting" and d.table.betting_deadline is None
    assert d.table.prompt().text == RESTART_CHECK_TEXT
    d.feed("controller.devices_checked", {})
    d.tick(seconds - 0.5)
    assert d.table.phase == "betting"
    d.bet(2, "p2")
    d.tick(1)
    assert d.table.phase == "dealing"
    wagers = next(e for e in d.events if e["type"] == "betting_closed")["data"]["wagers"]
    assert len(wagers) == 2
    assert d.replayed() == d.outputs


def test_a_start_that_does_not_check_the_devices_keeps_the_timers() -> None:
    """A controller without a broker (tests, tools) hears no device: nothing to wait for."""
    d = _deciding()
    seconds = d.table.ruleset.timeouts.decision_seconds
    d.feed("controller.started", {"logic": LOGIC}, dt=seconds + 10)
    assert _defaults(d) == 0  # (the start itself decides nothing)
    d.tick(0.1)
    assert _defaults(d) == 1
    assert d.replayed() == d.outputs


def test_a_run_of_logic_21_replays_its_restart_as_played() -> None:
    """Logic 20 and 21 held the prompt but not the timers: the overdue decision defaulted at the
    first timer input after the start."""
    d = _deciding(logic=21)
    seconds = d.table.ruleset.timeouts.decision_seconds
    _restart(d, down=seconds + 10, logic=21)
    assert d.table.prompt().text == RESTART_CHECK_TEXT
    d.tick(0.1)
    assert _defaults(d) == 1
    d.feed("controller.devices_checked", {})
    assert d.replayed() == d.outputs


def test_a_card_due_at_a_restart_is_not_prompted_until_the_check_ends() -> None:
    """Logic 20: the log's deal prompt may be for a card the dealer drew while the
    controller was down; the drivers send it again during the check."""
    d = Recorder(single_source=True)
    open_round(d, 1)
    d.card("TH")
    assert d.table.prompt().action == "deal"
    _restart(d, down=5)
    assert d.table.prompt().text == RESTART_CHECK_TEXT
    assert d.table.state().next_card is None
    d.card("7C")  # the dealer's up card, drawn while the controller was down
    assert d.table.prompt().text == RESTART_CHECK_TEXT
    d.feed("controller.devices_checked", {})
    prompt = d.table.prompt()
    assert prompt.action == "deal" and prompt.target is not None
    assert prompt.target["kind"] == "seat" and prompt.target["n"] == 3
    assert d.replayed() == d.outputs
