"""A source whose clock is off the controller's is said once, and shown (a regulator's review,
gap 2: a camera health report stamped an hour ahead was logged with no word).

The drivers correct a device's clock against their own host's; nothing compared a driver's or
a camera host's clock with the controller's. Its events' ``ts`` against the time they are
taken: a WARNING once past ``controller.clock_skew_warning_seconds``, an INFO once back
within, and each device's ``clock_skew`` in the table's state (REST, console).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studio.config.models import ControllerSettings, DeviceSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

SERVICE_LOGGER = "studio.controller.service"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 7, 14, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def _health(clock: Clock, ahead: float) -> dict[str, Any]:
    """cam-1's health report, stamped by a host clock ``ahead`` seconds ahead of ours."""
    ts = clock.now + timedelta(seconds=ahead)
    seq = int(clock.now.timestamp() * 1000)  # a health report's seq: Unix milliseconds
    return {
        "device": "cam-1",
        "seq": seq,
        "ts": ts.isoformat().replace("+00:00", "Z"),
        "status": "ok",
        "reason": "skew probe",
        "counters": {},
    }


def _skew_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if r.name == SERVICE_LOGGER and "clock" in r.getMessage()
    ]


async def test_a_camera_host_an_hour_ahead_is_warned_once_shown_and_said_back(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    camera = DeviceSettings(id="cam-1", kind="camera", port="", options={"source": "0"})
    settings = TableSettings(id="bj1", ruleset="clubhouse", devices=[camera])
    config = StudioConfig(tables=[settings])
    assert config.controller.clock_skew_warning_seconds == 2.0  # the default
    clock, log = Clock(), EventLog(database)
    caplog.set_level(logging.INFO, logger=SERVICE_LOGGER)
    async with ControllerService(
        config, None, log, Fanout(bus=None), clock=clock, timers=False
    ) as svc:
        for _ in range(3):
            clock.step(1)
            await svc.submit("bj1", "device.health", _health(clock, 3600))
        warned = _skew_lines(caplog)
        assert len(warned) == 1, warned  # once, not one a message
        level, text = warned[0]
        assert level == logging.WARNING
        assert "bj1/cam-1" in text and "ahead of ours by 3600.000 s" in text
        (device,) = [d for d in svc.table_state("bj1")["devices"] if d["device"] == "cam-1"]
        assert device["clock_skew"] == 3600.0
        assert svc.clocks.skews() == {"bj1/cam-1": 3600.0}

        # The host's clock set right: once the hour-ahead reports are out of the window
        # (the smallest difference of a minute is taken), the skew is back within the bound.
        clock.step(61)
        await svc.submit("bj1", "device.health", _health(clock, 0.25))
        clock.step(1)
        await svc.submit("bj1", "device.health", _health(clock, 0.0))
        lines = _skew_lines(caplog)
        assert [level for level, _ in lines] == [logging.WARNING, logging.INFO]
        assert "bj1/cam-1" in lines[1][1] and "within 2 s of ours again" in lines[1][1]
        (device,) = [d for d in svc.table_state("bj1")["devices"] if d["device"] == "cam-1"]
        # The smallest difference of the window: the report 0.25 s ahead.
        assert device["clock_skew"] == 0.25


async def test_late_messages_are_no_skew_and_the_bound_is_a_setting(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A message that comes late (a replay of old events, one held above a hole) is a delay,
    not a clock: with a fresh one in the window, nothing is said. A clock behind by more
    than the configured bound is."""
    camera = DeviceSettings(id="cam-1", kind="camera", port="", options={"source": "0"})
    settings = TableSettings(id="bj1", ruleset="clubhouse", devices=[camera])
    config = StudioConfig(
        tables=[settings], controller=ControllerSettings(clock_skew_warning_seconds=30)
    )
    clock, log = Clock(), EventLog(database)
    caplog.set_level(logging.INFO, logger=SERVICE_LOGGER)
    async with ControllerService(
        config, None, log, Fanout(bus=None), clock=clock, timers=False
    ) as svc:
        clock.step(1)
        await svc.submit("bj1", "device.health", _health(clock, -0.1))  # fresh
        clock.step(1)
        await svc.submit("bj1", "device.health", _health(clock, -600))  # 10 min late
        assert _skew_lines(caplog) == []
        assert svc.clocks.skews("bj1") == {"cam-1": -0.1}
        # Every message 40 s behind for more than the window: a clock behind, past 30 s.
        for _ in range(4):
            clock.step(20)
            await svc.submit("bj1", "device.health", _health(clock, -40))
        lines = _skew_lines(caplog)
        assert len(lines) == 1 and lines[0][0] == logging.WARNING
        assert "behind ours by 40.000 s (more than 30 s)" in lines[0][1]


def test_the_bound_is_positive_and_no_other_key_is_taken() -> None:
    with pytest.raises(ValueError, match="greater than 0"):
        ControllerSettings(clock_skew_warning_seconds=0)
    with pytest.raises(ValueError, match="Extra inputs"):
        StudioConfig.model_validate({"controller": {"clock_skew": 5}})
