"""One manager's pause at a time, and one alert for a storm of unlisted devices (logic 28).

Pauses: a second manager's ``pause`` while a manager's pause held was taken (the table one
flag): the console showed only the last one's reason, and one ``resume`` lifted both
people's pauses. From table logic 28 it is refused, naming who holds the pause and why, as
a ``resume`` of no pause is refused; the summary says who holds it.

Unlisted devices: every event of a device the table does not have raised an ``integrity``
alert of its own, each pausing the table: a publisher making up device ids raised as many
alerts as it sent events. From logic 28, while such an alert is open, a further one's event
is a ``device_refused`` round event, counted in the open alert (at most ``REFUSED_DEVICES``
ids listed). Logs written at 27 replay as they were played.
"""

from __future__ import annotations

import pytest
from logic17_support import Recorder, open_round

from studio.controller.alerts import AlertError
from studio.controller.table import REFUSED_DEVICES

DEVICES = [
    {"id": "shoe", "kind": "shoe"},
    {"id": "cam", "kind": "camera"},
    {"id": "shuf", "kind": "shuffler"},
]


def _pause(d: Recorder, user: str, reason: str) -> None:
    d.feed("manager.action", {"verb": "pause", "user": user, "reason": reason})


def test_a_second_pause_is_refused_naming_whose_pause_holds() -> None:
    d = Recorder()
    open_round(d, 1)
    _pause(d, "ann", "camera fault")
    outputs = list(d.outputs)
    with pytest.raises(AlertError, match=r"already paused by ann since .*: camera fault"):
        _pause(d, "bob", "dealer change")
    assert d.outputs == outputs  # nothing published, nothing changed
    summary = d.table.summary()
    assert summary["paused"]
    assert (summary["manager_pause"]["by"], summary["manager_pause"]["why"]) == (
        "ann",
        "camera fault",
    )
    d.feed("manager.action", {"verb": "resume", "user": "ann", "reason": "camera back"})
    assert not d.table.paused and d.table.summary()["manager_pause"] is None
    _pause(d, "bob", "dealer change")  # a pause again once none holds
    assert d.table.summary()["manager_pause"]["by"] == "bob"
    assert d.replayed() == d.outputs


def test_a_pause_is_taken_while_only_alerts_pause_the_table() -> None:
    d = Recorder(devices=DEVICES)
    open_round(d, 1)
    d.feed("shoe.card", {"device": "rogue", "seq": 1, "ts": d.ts(), "card": "AS", "shoe": "S1"})
    assert d.table.paused and d.table.summary()["manager_pause"] is None
    _pause(d, "ann", "checking the shoe")
    assert d.table.summary()["manager_pause"]["by"] == "ann"


def test_a_logic_27_log_of_two_pauses_replays_as_it_was_played() -> None:
    d = Recorder(logic=27)
    open_round(d, 1)
    _pause(d, "ann", "camera fault")
    _pause(d, "bob", "dealer change")  # taken up to 27: the last one's reason shown
    assert d.table.summary()["manager_pause"]["by"] == "bob"
    assert [e["data"]["by"] for e in d.events if e["type"] == "manager_action"] == ["ann", "bob"]
    assert d.replayed() == d.outputs


def _rogues(d: Recorder, count: int, prefix: str = "rogue") -> None:
    for n in range(count):
        card = {"device": f"{prefix}-{n}", "seq": 1, "ts": d.ts(), "card": "AS", "shoe": "S1"}
        d.feed("shoe.card", card, dt=0.001)


def test_made_up_device_ids_raise_one_alert_while_it_is_open() -> None:
    d = Recorder(devices=DEVICES)
    open_round(d, 1)
    _rogues(d, 500)
    raised = d.raised()
    assert len(raised) == 1  # up to 27: 500, each pausing the table
    [alert] = raised
    assert (alert["code"], alert["message"]) == (
        "integrity",
        "unauthorised shoe device 'rogue-0' on table bj-1",
    )
    refused = [e["data"] for e in d.events if e["type"] == "device_refused"]
    assert len(refused) == 499
    assert refused[-1] == {
        "device": "rogue-499",
        "kind": "shoe",
        "alert_id": alert["alert_id"],
        "refused": 499,
    }
    # The open alert counts them, listing the first REFUSED_DEVICES ids only.
    [held] = d.table.alerts.open_alerts()
    tally = held.message_model().evidence[-1]
    assert tally["refused"] == 499
    assert tally["devices"] == [f"rogue-{n}" for n in range(1, REFUSED_DEVICES + 1)]
    # A camera sighting of an unlisted camera is refused under the same alert.
    seen = {"device": "cam-x", "seq": 1, "ts": d.ts(), "card": "AS", "zone": "seat:1"}
    d.feed("camera.card", {**seen, "confidence": 0.99})
    assert len(d.raised()) == 1
    # Resolved, the next unlisted device raises an alert of its own.
    d.resolve(alert["alert_id"], "cancel")
    _rogues(d, 3, prefix="later")
    later = [a for a in d.raised() if a["alert_id"] != alert["alert_id"]]
    assert [a["message"] for a in later] == ["unauthorised shoe device 'later-0' on table bj-1"]
    assert d.replayed() == d.outputs


def test_a_logic_27_log_of_made_up_device_ids_replays_as_it_was_played() -> None:
    d = Recorder(logic=27, devices=DEVICES)
    open_round(d, 1)
    _rogues(d, 30)
    assert len(d.raised()) == 30  # an alert each, up to 27
    assert not any(e["type"] == "device_refused" for e in d.events)
    assert d.replayed() == d.outputs
