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
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_support import stop_handlers_kept

from studio import process


@pytest.fixture(autouse=True)
def _stop_handlers_kept() -> Iterator[None]:
    with stop_handlers_kept():
        yield


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

    async def session() -> None:  # two awaits above where it waits, as the bus's task was
        await swallows_its_cancellation()

    async def serve() -> None:
        await session()

    async def work() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(serve(), name="stuck-child")

    running = asyncio.create_task(process.run_until_signalled(work(), name="worker"))
    await asyncio.sleep(0.05)
    signal.raise_signal(signal.SIGINT)
    async with asyncio.timeout(10):
        while caplog.text.count("still stopping") < 2:  # said again while it lasts
            await asyncio.sleep(0.02)
    first = next(r.getMessage() for r in caplog.records if "still stopping" in r.getMessage())
    assert first.startswith("worker: still stopping after 0.1 s; waiting for ")
    assert "- stuck-child:" in first
    # Down the chain of awaits to where it waits, innermost last (Task.print_stack showed
    # "in serve" alone on Python 3.11: a review).
    frames = [line.rsplit(" in ", 1)[1] for line in first.splitlines() if ", line " in line]
    at = frames.index("serve")
    assert frames[at : at + 4] == ["serve", "session", "swallows_its_cancellation", "wait"]
    assert "await released.wait()" in first
    # The work's own task is listed; the task waiting for it (run_until_signalled) is not.
    assert "- worker:" in first and "run_until_signalled" not in first
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


STUCK_STOP = """
import time
from studio import process

process.STOP_REPORT_AFTER = 0.2

async def work() -> None:
    print("started", flush=True)  # the stop handlers are in place
    try:
        await asyncio.sleep(3600)
    finally:
        time.sleep(1.5)  # the event loop blocked: only a thread dump can say where

import asyncio
process.run_process(work, name="blocked")
"""


def test_a_stop_with_its_event_loop_blocked_dumps_the_threads(tmp_path: Path) -> None:
    """What the stop's own report cannot see (it runs on the event loop): a blocked loop, or
    ``asyncio.run`` waiting for a worker thread at its end. After twice
    ``STOP_REPORT_AFTER`` every thread's stack is dumped to stderr (faulthandler)."""
    script = tmp_path / "stuck_stop.py"
    script.write_text(STUCK_STOP)
    child = subprocess.Popen(
        [sys.executable, str(script)], stderr=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"started\n"
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    said = err.decode()
    assert child.returncode == 0, said
    assert "Timeout (0:00:00.400000)!" in said, said  # faulthandler's heading
    line = (
        STUCK_STOP.splitlines().index(
            "        time.sleep(1.5)  # the event loop blocked: only a thread dump can say where"
        )
        + 1
    )
    assert f'File "{script}", line {line} in work' in said, said
