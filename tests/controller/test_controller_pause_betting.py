"""The betting window stops while the round is paused (table logic 11).

docs/controller.md: "Timers stop while the round is paused." The decision timer did; the
betting window ran on: a manager who paused a table during betting (or an alert that
paused it) saw bets close, and the round go on to its deal, while still looking. Now the
window stops, and runs on for what was left of it when the round resumes. A run logged
with logic 10 replays as it was played.
"""

from __future__ import annotations

from test_controller_table import Driver


def _betting(logic: int | None = None) -> tuple[Driver, float]:
    """A table whose round is open for bets, one bet placed; its betting window, seconds."""
    d = Driver(single_source=True)
    if logic is not None:
        d.table.logic = logic  # the logic a replay runs for a run logged with it
    d.shuffle()
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"
    d.bet(1, "p1")
    return d, float(d.table.ruleset.timeouts.betting_seconds)


def test_a_manual_pause_stops_the_betting_window() -> None:
    d, window = _betting()
    d.tick(window / 2 - 0.2)  # half the window gone (the bet took 0.1 s, the pause 0.1 s)
    d.manager(verb="pause", reason="supervisor check")
    d.tick(window * 3)  # paused: bets stay open
    assert d.table.phase == "betting" and "betting_closed" not in d.types()
    d.manager(verb="resume", reason="checked")
    d.tick(window / 2 - 0.5)  # what was left, less a little
    assert d.table.phase == "betting"
    d.tick(0.5)
    assert d.table.phase == "dealing" and "betting_closed" in d.types()


def test_an_alert_that_pauses_during_betting_stops_it_too() -> None:
    d, window = _betting()
    d.card("TH")  # drawn before bets closed: a pausing alert
    assert [a["code"] for a in d.alerts] == ["game_before_time"]
    d.tick(window * 3)
    assert d.table.phase == "betting"
    (alert,) = d.table.alerts.open_alerts()
    d.manager(verb="resolve", alert_id=alert.alert_id, resolution="void", reason="burnt by hand")
    assert not d.table.paused and d.table.phase == "betting"
    d.tick(window)
    assert d.table.phase == "dealing"


def test_a_logic_10_run_closed_bets_on_time_as_it_was_played() -> None:
    d, window = _betting(logic=10)
    d.manager(verb="pause", reason="supervisor check")
    d.tick(window)
    assert d.table.phase == "dealing"


def test_bets_wait_while_the_round_is_paused() -> None:
    d, _ = _betting()
    d.manager(verb="pause", reason="supervisor check")
    d.bet(2, "p2", cid="while-paused")
    assert d.rejected("while-paused") == "the round is paused"
    d.manager(verb="resume", reason="checked")
    d.bet(2, "p2", cid="after")
    assert "command_accepted" in d.types()[-3:]


def test_a_logic_10_run_took_bets_while_paused() -> None:
    d, _ = _betting(logic=10)
    d.manager(verb="pause", reason="supervisor check")
    d.bet(2, "p2", cid="while-paused")
    assert not any(e["type"] == "command_rejected" for e in d.events)
