"""The camera's windows stop while the controller is down (table logic 25), as the players' timers do.

A review (camera table, ``camera_window_seconds`` 6) killed the controller (kill -9) after
two cards of the deal, 9H to seat 1 and QC to seat 2, and the dealer drew 4D, the up card,
while it was down. The camera's sightings of the three were sent while it was down (a
camera answers no replay request: lost). 56 ms after the start, at its first timer, before
the devices were asked for their tails, the windows of 9H and QC, which had run on through
the outage, ended: two misscans paused the table. Then the shoe's tail brought 4D, the card
that was due, and it was held as an ``unexpected_card`` "4D drawn while the round is
paused": nothing was paused when it was drawn. The windows of the cards waiting for the
camera at a start that checks the devices now wait for its ``controller.devices_checked``
and start again in full from it (logic 25, as logic 22 does for the players' timers): the
tail's card is dealt to the box due first, and a sighting lost in the outage is still a
misscan, one window after the check. Runs logged with logic 24 replay as played.
"""

from __future__ import annotations

from datetime import timedelta

from logic17_support import Recorder, open_round

from studio.controller.table import LOGIC, RESTART_CHECK_TEXT

WINDOW = 6.0


def _restart(d: Recorder, down: float, logic: int = LOGIC) -> None:
    """The controller died and starts again ``down`` seconds later (its devices asked)."""
    d.feed("controller.started", {"logic": logic, "checks_devices": True}, dt=down)


def _dealt_two_then_killed(logic: int = LOGIC) -> Recorder:
    """Seat 1's and seat 2's first cards logged, the camera's sightings of them not yet."""
    d = Recorder(logic=logic, camera_window_seconds=WINDOW)
    open_round(d, 1, 2)
    d.card("9H")
    d.card("QC")
    assert d.table.crosscheck.undecided() and not d.alerts
    return d


def _codes(d: Recorder) -> list[tuple[str, str]]:
    return [(a["code"], a["message"]) for a in d.raised()]


def test_a_card_dealt_while_down_is_dealt_before_any_window_ends() -> None:
    d = _dealt_two_then_killed()
    _restart(d, down=7.0)  # past the windows of 9H and QC
    assert d.table.prompt().text == RESTART_CHECK_TEXT
    overdue = d.table.crosscheck.next_deadline()
    assert overdue is not None and overdue < d.now  # the windows ended while it was down
    assert overdue not in d.table.deadlines()  # held until the check ends
    d.tick(0.056)  # the first timer of the restart
    assert not d.alerts and not d.table.paused
    d.card("4D")  # the dealer's up card, drawn while the controller was down: the shoe's tail
    assert not d.alerts
    assert [c.code for c in d.table.cards] == ["9H", "QC", "4D"]
    d.feed("controller.devices_checked", {}, dt=1.0)
    prompt = d.table.prompt()
    assert prompt.action == "deal" and prompt.target is not None
    assert prompt.target["kind"] == "seat" and prompt.target["n"] == 4  # seat 1's second
    assert d.table.crosscheck.next_deadline() == d.now + timedelta(seconds=WINDOW)
    d.tick(WINDOW - 0.5)
    assert not d.alerts
    d.tick(1.0)  # the sightings lost in the outage: misscans, one window after the check
    assert _codes(d) == [
        ("misscan", "camera did not see 9H in seat:1"),
        ("misscan", "camera did not see QC in seat:2"),
        ("misscan", "camera did not see 4D in dealer"),
    ]
    assert not [e for e in d.events if e["type"] == "card_held"]
    assert d.replayed() == d.outputs


def test_a_window_restarted_at_the_check_lets_the_camera_confirm_the_card() -> None:
    d = _dealt_two_then_killed()
    _restart(d, down=7.0)
    d.tick(0.056)
    d.feed("controller.devices_checked", {}, dt=1.0)
    d.tick(WINDOW - 1.0)
    d.camera("9H", "seat:1")  # the camera reads the cards again (its audit)
    d.camera("QC", "seat:2")
    confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert confirmed == [{"index": 1, "camera": "match"}, {"index": 2, "camera": "match"}]
    d.tick(WINDOW)
    assert not d.alerts and not d.table.crosscheck.undecided()
    assert d.replayed() == d.outputs


def test_a_start_that_does_not_check_the_devices_keeps_the_windows() -> None:
    """A controller without a broker (tests, tools) asks no device: nothing to wait for."""
    d = _dealt_two_then_killed()
    d.feed("controller.started", {"logic": LOGIC}, dt=7.0)
    d.tick(0.056)
    assert [code for code, _ in _codes(d)] == ["misscan", "misscan"]
    assert d.replayed() == d.outputs


def test_a_run_of_logic_24_replays_its_restart_as_played() -> None:
    """Up to 24 the windows ran on through the outage: the first timer after the start raised
    the misscans, and the tail's card was held as drawn while the round is paused."""
    d = _dealt_two_then_killed(logic=24)
    _restart(d, down=7.0, logic=24)
    d.tick(0.056)
    assert _codes(d) == [
        ("misscan", "camera did not see 9H in seat:1"),
        ("misscan", "camera did not see QC in seat:2"),
    ]
    d.card("4D")
    assert _codes(d)[-1] == ("unexpected_card", "4D drawn while the round is paused")
    d.feed("controller.devices_checked", {}, dt=1.0)
    assert d.replayed() == d.outputs


def test_a_sighting_logged_before_the_kill_pairs_with_the_shoe_s_tail() -> None:
    """The camera's sighting came in before the kill, the shoe's read of that card was in
    flight: the tail brings the read during the check, and they pair (up to 24 the sighting's
    window ended first: "a card the shoe never scanned", then the read held as paused)."""
    for logic, paired in [(LOGIC, True), (24, False)]:
        d = Recorder(logic=logic, camera_window_seconds=WINDOW)
        open_round(d, 1)
        d.camera("9H", "seat:1")
        _restart(d, down=7.0, logic=logic)
        d.tick(0.056)
        d.card("9H")
        d.feed("controller.devices_checked", {}, dt=1.0)
        d.tick(WINDOW + 1)
        confirmed = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
        if paired:
            assert confirmed == [{"index": 1, "camera": "match"}] and not d.alerts
            assert [c.code for c in d.table.cards] == ["9H"]
        else:
            assert [code for code, _ in _codes(d)] == ["misscan", "unexpected_card"]
        assert d.replayed() == d.outputs
