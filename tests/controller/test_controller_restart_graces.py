"""The cut-card and load graces start again in full at a restart (table logic 26).

Both run between rounds, where a start does not hold the round's timers (logic 20, 22 and
25 hold them for a round in progress): ``cut_card_grace`` waits for the cut-card sensor's
report after the cut card came out, ``load_grace`` for the shuffler's count of a shoe loaded
before it. A kill -9 review stopped the controller while one of them ran and started it
again after it would have ended: the start's first timer fired it at once, before the
devices, asked for what the log lacks (``checks_devices``), had re-sent the report a second
later. A false ``cut_card_missing`` ("check the sensor") was raised for a cut card the
sensor had seen, and the shoe was loaded without its count: out of play, a pausing
``shuffler_count_mismatch`` for a manager. Now a start that checks the devices gives a
pending grace its full length again from the start. Runs logged with logic 25 replay as
played.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from logic17_support import Recorder
from test_controller_cut_card_late import CUT_POINT, _deal_to_the_cut_point, _missing
from test_controller_cut_point import ONE_DECK, _cut_card, _deck

from studio.controller.table import LOGIC


def _restart(d: Recorder, down: float, logic: int = LOGIC, checks: bool = True) -> None:
    """The controller was killed and starts again ``down`` seconds later."""
    data: dict[str, Any] = {"logic": logic, "unclean_stop": True}
    if checks:
        data["checks_devices"] = True  # it asks the devices for what the log lacks
    d.feed("controller.started", data, dt=down)


def _cut_card_out(logic: int = LOGIC) -> Recorder:
    """A one-deck shoe dealt to its cut point; the sensor's report not yet in."""
    d = Recorder(ruleset=ONE_DECK, logic=logic, single_source=True)
    assert _deal_to_the_cut_point(d, _deck(0))  # seed 0: the 26th card ends its round
    assert d.table.phase == "shoe_change" and d.table.cut_card_due is not None
    assert not d.table.checking_devices  # between rounds: no round timers to hold
    return d


def test_a_cut_card_grace_pending_at_a_restart_waits_for_the_sensor_s_re_sent_report() -> None:
    d = _cut_card_out()
    grace = d.table.cut_card_grace
    _restart(d, down=grace + 10)  # killed just after the card, down past the grace
    started = d.now
    d.tick(0.1)
    assert _missing(d) == []  # (up to logic 25: cut_card_missing, 0.1 s after the start)
    assert d.table.cut_card_due == started + timedelta(seconds=grace)
    _cut_card(d)  # the sensor's report, re-sent on the start's request
    d.tick(grace * 2)
    assert _missing(d) == []
    (cut,) = [a for a in d.alerts if a["code"] == "cut_card"]
    assert "this is the last round" not in str(cut["message"])
    assert d.table.prompt().action == "change_shoe"
    assert d.replayed() == d.outputs


def test_a_cut_card_never_reported_is_missing_a_grace_after_the_restart() -> None:
    d = _cut_card_out()
    grace = d.table.cut_card_grace
    _restart(d, down=grace + 10)
    d.tick(grace - 0.5)
    assert _missing(d) == []
    d.tick(1)
    (missing,) = _missing(d)
    assert f"{CUT_POINT} cards dealt" in str(missing["message"])
    assert d.replayed() == d.outputs


def test_a_run_of_logic_25_replays_its_restart_s_cut_card_grace_as_played() -> None:
    d = _cut_card_out(logic=25)
    _restart(d, down=d.table.cut_card_grace + 10, logic=25)
    d.tick(0.1)
    assert len(_missing(d)) == 1  # the false alert those runs raised
    _cut_card(d)
    assert d.replayed() == d.outputs


def _load_awaiting_its_count(logic: int = LOGIC) -> Recorder:
    """A shoe reported loaded before the shuffler's count of its cards."""
    d = Recorder(logic=logic, single_source=True)
    d.load("S1")
    assert "shoe_load_pending" in d.types() and d.table.pending_load is not None
    return d


def test_a_load_pending_at_a_restart_waits_for_the_shuffler_s_re_sent_count() -> None:
    d = _load_awaiting_its_count()
    grace = d.table.load_grace
    _restart(d, down=grace + 10)
    d.tick(0.1)
    assert d.table.pending_load is not None and d.table.shoe.shoe_id is None
    d.shuffle(8)  # the count, re-sent on the start's request
    assert d.table.pending_load is None
    assert d.table.shoe.shoe_id == "S1" and d.table.shoe.verified
    assert not d.table.shoe.out_of_play
    d.tick(0.1)
    assert d.raised() == [] and not d.table.paused
    assert d.table.phase == "betting"
    assert d.replayed() == d.outputs


def test_a_load_whose_count_never_comes_is_taken_a_grace_after_the_restart() -> None:
    d = _load_awaiting_its_count()
    grace = d.table.load_grace
    _restart(d, down=grace + 10)
    d.tick(grace - 0.5)
    assert d.table.pending_load is not None
    d.tick(1)
    assert d.table.pending_load is None
    assert d.table.shoe.shoe_id == "S1" and not d.table.shoe.verified
    assert d.replayed() == d.outputs


def test_a_start_that_does_not_check_the_devices_keeps_the_graces() -> None:
    """A controller without a broker (tests, tools) hears no device: nothing to wait for."""
    d = _load_awaiting_its_count()
    _restart(d, down=d.table.load_grace + 10, checks=False)
    d.tick(0.1)
    assert d.table.pending_load is None and not d.table.shoe.verified
    assert d.replayed() == d.outputs


def test_a_run_of_logic_25_replays_its_restart_s_load_grace_as_played() -> None:
    d = _load_awaiting_its_count(logic=25)
    _restart(d, down=d.table.load_grace + 10, logic=25)
    d.tick(0.1)
    assert d.table.pending_load is None  # taken without its count, as those runs did
    assert d.table.shoe.shoe_id == "S1" and not d.table.shoe.verified
    (alert,) = d.raised()  # the false alert those runs raised, pausing the table
    assert alert["code"] == "shuffler_count_mismatch" and d.table.paused
    assert "without a verified shuffler count" in alert["message"]
    d.shuffle(8)  # the count came too late: the next shoe's
    assert not d.table.shoe.verified and d.table.shoe.out_of_play
    assert d.replayed() == d.outputs
