"""A stop that takes long says what it waits for (``studio.process.run_until_signalled``).

Once (a CI run of 2026-12-07) ``studio drivers run`` never ended after SIGINT, and said
nothing: a cancellation lost in the bus's setup, found only by reproducing it. Now every
``STOP_REPORT_AFTER`` seconds of a stop, each task still running is logged with where it
waits.
"""

from __future__ import annotations

import asyncio
import logging
import signal

import pytest

from studio import process


async def test_a_stop_that_takes_long_says_what_it_waits_for(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(process, "STOP_REPORT_AFTER", 0.1)
    caplog.set_level(logging.WARNING, logger="studio.process")
    released = asyncio.Event()

    async def swallows_its_cancellation() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await released.wait()  # taken and not passed on, as a lost cancellation is

    async def work() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(swallows_its_cancellation(), name="stuck-child")

    running = asyncio.create_task(process.run_until_signalled(work(), name="worker"))
    await asyncio.sleep(0.05)
    signal.raise_signal(signal.SIGINT)
    async with asyncio.timeout(10):
        while caplog.text.count("still stopping") < 2:  # said again while it lasts
            await asyncio.sleep(0.02)
    first = next(r.getMessage() for r in caplog.records if "still stopping" in r.getMessage())
    assert first.startswith("worker: still stopping after 0.1 s; waiting for ")
    assert "- stuck-child:" in first
    assert "in swallows_its_cancellation" in first  # where it waits
    assert "await released.wait()" in first
    released.set()
    assert await running is True
    said = caplog.text.count("still stopping")
    await asyncio.sleep(0.3)
    assert caplog.text.count("still stopping") == said  # the stop is over: no more


async def test_a_quick_stop_says_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(process, "STOP_REPORT_AFTER", 0.1)
    caplog.set_level(logging.WARNING, logger="studio.process")

    async def work() -> None:
        await asyncio.sleep(3600)

    running = asyncio.create_task(process.run_until_signalled(work(), name="worker"))
    await asyncio.sleep(0.05)
    signal.raise_signal(signal.SIGINT)
    assert await running is True
    await asyncio.sleep(0.3)
    assert "still stopping" not in caplog.text
