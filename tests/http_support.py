"""Helpers for tests that talk HTTP to a studio process or app."""

from __future__ import annotations

import asyncio
import re

import httpx


def form_token(html: str) -> str:
    """The CSRF token of a console page's form."""
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF field"
    return match.group(1)


async def wait_healthy(client: httpx.AsyncClient, process: asyncio.subprocess.Process) -> None:
    """Poll ``/api/health`` until it answers 200, failing if ``process`` ends first."""
    async with asyncio.timeout(60):
        while True:
            assert process.returncode is None, "the controller process ended"
            try:
                if (await client.get("/api/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
