"""An alert left open when the controller stopped is escalated `escalate_after` seconds after
the controller started again, not at once (logic 17).

While the controller was down no manager could resolve it. Up to 16 the escalation counted
that time: every pausing alert the last run left open got a `timeout` alert the moment the
controller started ("resolve it or cancel the round", for a round perhaps already gone;
a demo review: majority-eu went from 5 to 10 open alerts at its second start).
"""

from __future__ import annotations

from typing import Any

from logic17_support import Recorder, open_round


def _left_open_across_a_restart(logic: int) -> Recorder:
    d = Recorder(single_source=True, logic=logic)
    open_round(d, 1)
    d.card("TH")
    d.card("7C")
    d.card("9D")
    d.card("5S")
    d.card("2C")  # unexpected: a decision is pending
    assert d.alerts[-1]["code"] == "unexpected_card"
    d.tick(30)
    # The controller stops and starts again an hour later (the manager could do nothing).
    d.feed("controller.started", {"logic": logic}, dt=3600)
    d.tick(1)
    return d


def _timeouts(d: Recorder) -> list[dict[str, Any]]:
    return [a for a in d.raised() if a["code"] == "timeout"]


def test_an_alert_left_open_is_escalated_a_full_wait_after_the_start() -> None:
    d = _left_open_across_a_restart(17)
    assert d.table.paused
    assert not _timeouts(d)
    d.tick(117)  # 118 s since the start
    assert not _timeouts(d)
    d.tick(3)  # 121 s since the start
    [timeout] = _timeouts(d)
    assert timeout["evidence"][0]["code"] == "unexpected_card"
    # The message says how long the alert has been open, the controller's downtime too.
    assert timeout["evidence"][0]["waited_s"] >= 3600
    assert d.replayed() == d.outputs


def test_the_next_deadline_is_the_escalation_after_the_start() -> None:
    d = _left_open_across_a_restart(17)
    start = d.inputs[-2].ts
    assert d.inputs[-2].kind == "controller.started"
    due = d.table._next_escalation()
    assert due is not None and (due - start).total_seconds() == 120


def test_up_to_logic_16_the_downtime_counted() -> None:
    d = _left_open_across_a_restart(16)
    assert len(_timeouts(d)) == 1
    assert d.replayed() == d.outputs
