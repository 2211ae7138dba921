"""The log throttle of links that keep failing, after a review (2026-12-06): failures
alternating between two reasons were each logged (a reason was compared only with the last
one logged); the failures a run left unlogged were never counted once the link came back;
and a device back online after one failed reconnect said "after 2 failed connects" (the
disconnect itself was counted)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from drivers.shoe import ShoeDriver
from studio.backoff import Backoff, RepeatedFailure, run_forever
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.errors import DeviceError

FAST = {"initial": 1e-4, "maximum": 1e-3}


def messages(caplog: pytest.LogCaptureFixture, level: int, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and r.name == logger]


def test_alternating_reasons_are_each_throttled(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = RepeatedFailure(logging.getLogger("alt"), clock=lambda: now[0])
    caplog.set_level(logging.DEBUG, logger="alt")
    for i in range(30):  # A, B, A, B ... 2 s apart: one minute
        reason = "AB"[i % 2]
        log.failed(reason, "x down: %s", reason)
        now[0] += 2.0
    assert messages(caplog, logging.WARNING, "alt") == ["x down: A", "x down: B"]
    assert log.failed("A", "x down: %s", "A")  # t=60: A's minute is over
    assert messages(caplog, logging.WARNING, "alt")[-1] == (
        "x down: A (14 more like it in the last 60s, not logged)"
    )


def test_the_reasons_remembered_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    log = RepeatedFailure(logging.getLogger("bound"), clock=lambda: 0.0, reasons=2)
    caplog.set_level(logging.DEBUG, logger="bound")
    assert [log.failed(r, "x down: %s", r) for r in "ABCBA"] == [True, True, True, False, True]
    assert len(log._logged) == 2


def test_clear_says_how_many_failures_went_unlogged(caplog: pytest.LogCaptureFixture) -> None:
    log = RepeatedFailure(logging.getLogger("tally"), clock=lambda: 0.0, name="x")
    caplog.set_level(logging.INFO, logger="tally")
    for _ in range(10):
        log.failed("gone", "x down: %s", "gone")
    log.failed("refused", "x down: %s", "refused")
    assert log.clear() == 11
    assert messages(caplog, logging.INFO, "tally") == [
        "x: 9 of 11 failures were not logged (the same reason again within 60s)"
    ]
    log.failed("gone", "x down: %s", "gone")
    assert log.clear() == 1  # all of them logged: no line
    assert len(messages(caplog, logging.INFO, "tally")) == 1


async def test_a_flapping_link_that_recovers_tells_its_tally(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="flap")
    stop = asyncio.Event()
    calls = 0

    async def session() -> None:
        nonlocal calls
        calls += 1
        if calls <= 6:
            raise OSError("refused")
        await stop.wait()  # up, and stays up

    task = asyncio.create_task(
        run_forever(
            "link",
            session,
            retry_on=(OSError,),
            backoff=Backoff(**FAST),
            healthy_after=0.05,
            logger=logging.getLogger("flap"),
            stop=stop,
        )
    )
    try:
        async with asyncio.timeout(5):
            while not messages(caplog, logging.INFO, "flap"):
                await asyncio.sleep(0.01)
    finally:
        stop.set()
        await task
    assert messages(caplog, logging.INFO, "flap") == [
        "link: 5 of 6 failures were not logged (the same reason again within 60s)"
    ]
    assert len(messages(caplog, logging.WARNING, "flap")) == 1


async def test_back_online_after_one_failed_reconnect_says_one(
    broker: BrokerSettings, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="drivers.device")
    settings = DeviceSettings(id="shoe-1", kind="shoe", port="/dev/null-shoe")
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(**FAST))
    calls = 0

    async def session() -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the reconnect after the drop fails
            raise DeviceError("shoe-1: no answer to the handshake within 2.0s")
        await driver._set_online(True, "connected to X")
        if calls == 1:  # online a while, then the link drops
            raise DeviceError("shoe-1: read failed")
        await asyncio.Event().wait()

    driver._session = session  # type: ignore[method-assign]
    task = asyncio.create_task(driver.run())
    try:
        async with asyncio.timeout(10):
            while calls < 3 or not driver.online:
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    online = [
        m
        for m in messages(caplog, logging.INFO, "drivers.device")
        if m.startswith(f"{table_id}/shoe-1 ok: connected to X")
    ]
    assert online == [
        f"{table_id}/shoe-1 ok: connected to X",
        f"{table_id}/shoe-1 ok: connected to X (after 1 failed connect)",
    ]
