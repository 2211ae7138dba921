"""Helpers for tests that run the studio's commands as processes."""

from __future__ import annotations

import asyncio
import signal
from asyncio.subprocess import Process
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


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
