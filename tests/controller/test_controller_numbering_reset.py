"""A driver's ``numbering_reset`` (its device restarted its numbering while the link or the
driver was away: what it did meanwhile may be lost, and no hole in the seqs shows it) is an
``integrity`` alert from table logic 18, which pauses the round: a card dealt then was
never read. Up to 17 it was passed on as a ``device_event`` and play went on."""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.table import LOGIC


def _reset(d: Driver, source: str, device: str) -> None:
    d.feed(
        f"{source}.event",
        {
            "device": device,
            "seq": d.device(device),
            "ts": d.ts(),
            "event": "numbering_reset",
            "data": {"last_seen": 42, "last_bus_seq": 42, "count": 1, "reason": "restarted"},
        },
    )


@pytest.mark.parametrize(("source", "device"), [("shoe", "shoe")])
def test_a_numbering_reset_mid_round_pauses_it(source: str, device: str) -> None:
    for logic, alerted in [(LOGIC, True), (17, False)]:
        d = Driver("clubhouse", single_source=True)
        d.table.logic = logic
        start_round(d, 1)
        d.card("5S")
        _reset(d, source, device)
        open_alerts = d.table.alerts.open_alerts()
        if alerted:
            assert [a.code.value for a in open_alerts] == ["integrity"]
            assert "restarted its numbering" in open_alerts[0].message
            assert "after its event 42 may be lost" in open_alerts[0].message
            assert d.table.paused
        else:
            assert open_alerts == [] and not d.table.paused
            assert d.events[-1]["type"] == "device_event"


def test_a_numbering_reset_between_rounds_is_logged_without_an_alert() -> None:
    """No card of a round is at stake between rounds (or while betting): a studio powered
    down overnight, or the demo's fresh simulated devices at each run, would otherwise
    stop every table at its start."""
    d = Driver("clubhouse", single_source=True)
    d.shuffle()
    _reset(d, "shoe", "shoe")
    assert d.table.alerts.open_alerts() == []
    assert d.events[-1]["type"] == "numbering_reset"
    assert d.events[-1]["data"]["data"]["last_seen"] == 42


def test_a_shufflers_numbering_reset_mid_round_is_logged_only() -> None:
    """Its lost event is the next shoe's (a count is waited for): no card of the round is
    at stake, and an alert offering to cancel the round said one was (a review)."""
    d = Driver("clubhouse", single_source=True)
    start_round(d, 1)
    d.card("5S")
    _reset(d, "shuffler", "shuf")
    assert d.table.alerts.open_alerts() == [] and not d.table.paused
    assert d.events[-1]["type"] == "numbering_reset"
