"""A ``device_offline`` alert is accepted only once its device is back (table logic 24).

A review of the manager's console: on a single-source table whose shoe went offline mid-deal,
accepting the alert while the shoe was still offline lifted the pause and prompted the
dealer to deal the next card from the dead shoe ("Deal the dealer's up card"), with no word
that the shoe was still away. Now the accept is refused until the device is online again
(cancel still closes it, cancelling the round). A run logged with logic 23 replays as it
was played: the accept taken.
"""

from __future__ import annotations

import pytest
from logic17_support import Recorder, open_round
from test_controller_table import availability

from studio.controller.alerts import AlertError

DEVICES = [{"id": "shoe", "kind": "shoe"}, {"id": "shuf", "kind": "shuffler"}]


def _shoe_gone(logic: int | None = None) -> tuple[Recorder, str]:
    """Two cards dealt (seats 1 and 2) on a single-source table, then the shoe offline."""
    d = (
        Recorder(devices=DEVICES, single_source=True)
        if logic is None
        else Recorder(logic=logic, devices=DEVICES, single_source=True)
    )
    availability(d, "shoe", "online")
    open_round(d, 1, 2)
    d.card("9H")
    d.card("5C")
    availability(d, "shoe", "offline")
    (alert,) = d.table.alerts.open_alerts()
    assert alert.code.value == "device_offline" and d.table.paused
    return d, alert.alert_id


def test_accepting_while_the_device_is_still_offline_is_refused() -> None:
    d, alert_id = _shoe_gone()
    with pytest.raises(
        AlertError,
        match="shoe shoe is still offline: bring it back online, then accept; or cancel the round",
    ):
        d.resolve(alert_id, "accept")
    assert d.table.paused and d.table.prompt().action == "paused"
    assert [a.alert_id for a in d.table.alerts.open_alerts()] == [alert_id]
    availability(d, "shoe", "online")
    d.resolve(alert_id, "accept")
    assert not d.table.paused
    assert d.table.prompt().text == "Deal the dealer's up card"
    assert d.replayed() == d.outputs


def test_cancel_is_still_taken_while_the_device_is_offline() -> None:
    d, alert_id = _shoe_gone()
    d.resolve(alert_id, "cancel")
    assert d.table.phase == "settled" and not d.table.alerts.open_alerts()
    assert d.replayed() == d.outputs


def test_a_device_not_back_after_a_restart_is_accepted_only_once_back() -> None:
    d = Recorder(devices=DEVICES, single_source=True)
    availability(d, "shoe", "online")
    d.feed("controller.started", {"logic": d.table.logic})
    d.tick(d.table.restart_grace + 1)
    (alert,) = d.table.alerts.open_alerts()
    assert "not back online" in alert.message
    with pytest.raises(AlertError, match="shoe shoe is not back online: bring it back online"):
        d.resolve(alert.alert_id, "accept")
    availability(d, "shoe", "online")
    d.resolve(alert.alert_id, "accept")
    assert not d.table.paused
    assert d.replayed() == d.outputs


def test_a_run_logged_with_logic_23_replays_the_accept_as_taken() -> None:
    d, alert_id = _shoe_gone(logic=23)
    d.resolve(alert_id, "accept")  # up to 23 taken: the dealer sent back to the dead shoe
    assert not d.table.paused
    assert d.table.prompt().text == "Deal the dealer's up card"
    assert d.replayed() == d.outputs
