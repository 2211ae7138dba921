"""Helpers for tests that run the studio's commands as processes."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from studio.early_stop import STOP_SIGNALS


async def wait_line(
    stream: asyncio.StreamReader, needle: str, seen: list[str] | None = None
) -> None:
    """Read ``stream`` until a line contains ``needle`` (keeping the lines in ``seen``)."""
    seen = [] if seen is None else seen
    async with asyncio.timeout(60):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError(f"process ended before {needle!r}: {seen}")
            seen.append(line)
            if needle in line:
                return


@asynccontextmanager
async def reaped(process: Process) -> AsyncIterator[Process]:
    """``process``, killed at the end if it still runs (a test that failed before it ended
    leaves no process behind)."""
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def interrupted(process: Process, within: float) -> tuple[bytes, bytes]:
    """Send SIGINT to ``process``; the rest of its output, once it ended (within ``within`` s)."""
    process.send_signal(signal.SIGINT)
    async with asyncio.timeout(within):
        return await process.communicate()


@contextmanager
def stop_handlers_kept() -> Iterator[None]:
    """The test process's stop signals' handlers (SIGINT, SIGTERM, SIGHUP) as they were,
    after a test that signalled ``run_until_signalled`` in this process (it leaves its
    stop-at-once handlers for the rest of a process's life: a developer's Ctrl-C would end
    the test run at once)."""
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextmanager
def running(
    args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """The command ``args`` started (in ``cwd``, with ``env``), its stdout and stderr read
    as text, no stdin; killed at the end if it still runs."""
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=env,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_catching_stop_signals(
    process: subprocess.Popen[str], within: float = 30.0, sig: int = signal.SIGTERM
) -> None:
    """Wait until ``process`` catches ``sig``, SIGTERM or SIGHUP (``studio.early_stop.defer``,
    the entry point's first lines, catches every stop signal; Python's own start catches
    SIGINT only):
    a stop signal sent from then on is the studio's to handle. Sent after a fixed delay
    instead, a loaded machine's signal came while Python was still starting (a CI run of
    2026-12-07: KeyboardInterrupt in ``import typing``, the delay 0.15 s). A process that
    ended first fails the wait at once with what it wrote."""
    deadline = time.monotonic() + within
    status = Path(f"/proc/{process.pid}/status")
    while time.monotonic() < deadline:
        if process.poll() is not None:  # (ended, it is a zombie until reaped: poll reaps it)
            out, err = process.communicate()
            raise AssertionError(
                f"process ended (status {process.returncode}) before it caught its stop "
                f"signals:\n{out[-2000:]}\n{err[-2000:]}"
            )
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        if int(fields["SigCgt"], 16) >> (sig - 1) & 1:
            return
        time.sleep(0.002)
    name = signal.Signals(sig).name
    raise AssertionError(f"process {process.pid} did not catch {name} within {within:g} s")
