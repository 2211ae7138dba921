"""Alerts and pauses are in the controller's log, live ones only.

An operations review: raising, acknowledging and resolving an alert, and a table pausing
and resuming, printed no log line, so monitoring reading the journal saw none of them.
They are logged now (raised and paused at WARNING, the rest at INFO), and a start, which
rebuilds each table by replaying its whole log, does not log them again."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio.config import StudioConfig, TableSettings
from studio.contract import AlertMessage
from studio.controller import ControllerService
from studio.controller.alerts import AlertBook, log_live
from studio.store import Database, EventLog
from studio.streams import Fanout

TABLE = "bj-log"
LOGGER = "studio.controller.alerts"


def _service(db: Database) -> ControllerService:
    tables = [TableSettings(id=TABLE, devices=[{"id": "shoe-1", "kind": "shoe"}])]
    return ControllerService(
        StudioConfig(tables=tables), None, EventLog(db), Fanout(bus=None), timers=False
    )


def _lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]


async def test_an_alert_and_a_pause_are_logged_live_and_not_at_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        async with _service(db) as service:
            for state in ("online", "offline"):
                await service.submit(
                    TABLE, "device.availability", {"device": "shoe-1", "state": state}
                )
            (alert,) = service.alerts()
            alert_id = alert["alert_id"]
            await service.acknowledge_alert(alert_id, user="floor-1")
            # Accepted once the shoe is back (table logic 24).
            await service.submit(
                TABLE, "device.availability", {"device": "shoe-1", "state": "online"}
            )
            await service.resolve_alert(alert_id, "accept", user="floor-1", reason="cable back")
            await service.pause(TABLE, user="floor-2", reason="dealer change")
            await service.resume(TABLE, user="floor-2", reason="new dealer in")
        live = _lines(caplog)
        assert live == [
            (
                "WARNING",
                f"{TABLE}: alert {alert_id} raised: device_offline (warning, pauses the "
                "table): shoe shoe-1 went offline",
            ),
            ("WARNING", f"{TABLE}: table paused: open alerts {alert_id} (device_offline)"),
            ("INFO", f"{TABLE}: alert {alert_id} (device_offline) acknowledged by floor-1"),
            (
                "INFO",
                f"{TABLE}: alert {alert_id} (device_offline) resolved by floor-1: accept "
                "(cable back)",
            ),
            ("INFO", f"{TABLE}: table resumed by floor-1"),
            ("WARNING", f"{TABLE}: table paused: by floor-2"),
            ("INFO", f"{TABLE}: table resumed by floor-2"),
        ]
        caplog.clear()
        async with _service(db) as again:  # replays the whole log: nothing logged again
            assert again.alerts(state="resolved")[0]["alert_id"] == alert_id
        assert _lines(caplog) == []


def test_an_alert_s_message_is_logged_whole_on_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """Cut at 160 characters, an integrity alert's line ended "... may be unaccounted for:
    check t..." (an operator's walk-through): what to check was lost."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    words = "shoe t1-S0003 reported 7 cards out of play, which"
    text = f"{words} may be unaccounted for:\ncheck the discard rack " + "and the layout " * 12
    message = AlertMessage(
        alert_id="t1-A9", table="t1", round_id=None, ts=datetime.now(UTC), code="integrity",
        severity="critical", state="raised", message=text,
    )  # fmt: skip
    log_live(AlertBook("t1"), [message], was_paused=False, paused=False, manual=False)
    ((level, line),) = _lines(caplog)
    assert len(text) > 160 and level == "WARNING"
    assert line == f"t1: alert t1-A9 raised: integrity (critical): {' '.join(text.split())}"
