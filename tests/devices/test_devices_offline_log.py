"""A device that never comes online is retried for hours: its driver logged a WARNING on
every retry (two lines, every 250 ms at first), and a port nobody answers reset the backoff
on every retry. Now the first failure is a warning, the same one again once a minute with a
count, a changed reason at once, and a line when the device comes online."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import types
from pathlib import Path

import pytest
from devices_rig import ScriptedShoe

from drivers.shoe import ShoeDriver
from studio import backoff as backoff_module
from studio.backoff import Backoff, RepeatedFailure, run_forever
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.errors import DeviceError

FAST = {"initial": 1e-4, "maximum": 1e-3}


def test_a_repeated_failure_is_logged_once_a_minute_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    log = RepeatedFailure(logging.getLogger("repeat"), clock=lambda: now[0])
    caplog.set_level(logging.DEBUG, logger="repeat")

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

    for _ in range(10):
        log.failed("gone", "x down: %s", "gone")
        now[0] += 1.0
    assert warnings() == ["x down: gone"]
    assert log.failed("refused", "x down: %s", "refused")  # a new reason is news
    for _ in range(2):
        now[0] += 1.0
        assert not log.failed("refused", "x down: %s", "refused")
    now[0] = 70.0
    assert log.failed("refused", "x down: %s", "refused")
    assert warnings()[-1] == "x down: refused (2 more like it in the last 60s, not logged)"
    assert len(warnings()) == 3
    assert log.clear() == 14
    assert log.failed("refused", "x down: %s", "refused")  # a new run of failures


async def test_run_forever_logs_a_link_that_stays_down_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="links")
    backoff = Backoff(**FAST)
    calls = 0

    async def session() -> bool:
        nonlocal calls
        calls += 1
        if calls == 30:
            backoff.reset()  # the link was up a while, then dropped: said again
        if calls == 50:
            return True
        raise OSError("refused")

    await run_forever(
        "link", session, retry_on=(OSError,), backoff=backoff, logger=logging.getLogger("links")
    )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2, warned
    assert all(m.startswith("link: link down (refused); retrying in") for m in warned)


async def test_a_device_that_never_comes_online_is_not_logged_on_every_retry(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="drivers.device")
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(tmp_path / "unplugged"))
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(**FAST), health_interval=0.01)
    task = asyncio.create_task(driver.run())
    try:
        async with asyncio.timeout(20):
            while driver.stats["disconnects"] < 200 or driver._health_seq < 5:
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    warned = [r.getMessage() for r in caplog.records if r.name == "drivers.device"]
    # One line from the reconnect loop, one from the health report: not one per retry.
    assert len(warned) == 2, warned[:5]
    assert "link down" in warned[0] and f"{table_id}/shoe-1 offline: link down" in warned[1]


async def test_a_port_nobody_answers_does_not_reset_the_backoff(
    broker: BrokerSettings, table_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each session spends the handshake timeout (2 s) waiting for an answer: longer than
    # "healthy", so the backoff was reset every time and the port retried at the first delay.
    clock = [0.0]
    monkeypatch.setattr(backoff_module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(tmp_path / "silent"))
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(**FAST))

    async def silent_session() -> None:
        clock[0] += 2.5
        raise DeviceError("shoe-1: no answer to the handshake within 2.0s")

    driver._session = silent_session  # type: ignore[method-assign]
    task = asyncio.create_task(driver.run())
    try:
        async with asyncio.timeout(20):
            while driver.stats["disconnects"] < 5:
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert driver.backoff.resets == 0
    assert driver.backoff.attempts >= 4


async def test_a_device_that_comes_online_at_last_says_so_with_the_failed_connects(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="drivers.device")
    link = tmp_path / "shoe-1"
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(link))
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(**FAST))
    task = asyncio.create_task(driver.run())
    try:
        async with asyncio.timeout(20):
            while driver.stats["disconnects"] < 3:
                await asyncio.sleep(0.01)
            async with ScriptedShoe(link):  # plugged in at last
                while not driver.online:
                    await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    online = [m for m in said if m.startswith(f"{table_id}/shoe-1 ok: connected to {link}")]
    assert len(online) == 1, said
    assert online[0].endswith("failed connects)") and "(after " in online[0], online
