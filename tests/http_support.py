"""Helpers for tests that talk HTTP to a studio process or app."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import httpx

from studio.config import BrokerSettings

STUDIO = Path(sys.executable).parent / "studio"


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


def controller_config(
    folder: Path, broker: BrokerSettings, table_id: str, port: int, extra: str = ""
) -> Path:
    """``folder/studio.toml`` for ``studio controller run``: the test's broker and client id
    prefix, SQLite in ``folder``, the web ``port``, one table; ``extra``: more TOML."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "studio.toml"
    path.write_text(
        f'[broker]\nurl = "{broker.url}"\nclient_id_prefix = "{broker.client_id_prefix}"\n'
        f'[database]\nurl = "sqlite:///{folder}/studio.db"\n'
        f"[web]\nport = {port}\n"
        f"{extra}"
        f'[[tables]]\nid = "{table_id}"\n'
    )
    return path


async def start_controller(config: Path) -> asyncio.subprocess.Process:
    """``studio controller run --config CONFIG`` as a process, its output piped."""
    return await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
