"""Helpers for tests that run the studio's commands as processes."""

from __future__ import annotations

import asyncio


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
