"""Helpers for tests that talk HTTP to a studio process or app."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from argon2 import PasswordHasher

import studio.console  # registers the users/sessions tables before create_all
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, create_app

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


PASSWORD = "correct horse battery"
PLATFORM_TOKEN = "s3cret-token"
PLATFORM = {"Authorization": f"Bearer {PLATFORM_TOKEN}"}


@asynccontextmanager
async def app_client(database: Database, table_id: str) -> AsyncIterator[httpx.AsyncClient]:
    """The web app on a real controller service (table ``table_id``: clubhouse, a shoe and
    a camera) and database, a manager ``boss`` (PASSWORD) and the platform token; a server
    error is answered 500, as uvicorn would, instead of raised into the test."""
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await studio.console.UserStore(database, hasher=hasher).add(
        "boss", PASSWORD, "manager", by="test"
    )
    devices = [{"id": "shoe", "kind": "shoe"}, {"id": "cam", "kind": "camera"}]
    config = StudioConfig(tables=[TableSettings(id=table_id, ruleset="clubhouse", devices=devices)])
    log, fanout = EventLog(database), Fanout(bus=None)
    console = studio.console.ConsoleSettings(
        argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1
    )
    async with ControllerService(config, None, log, fanout, timers=False) as controller:
        ctx = WebContext(
            fanout=fanout,
            log=log,
            db=database,
            controller=controller,
            extras={"console": console, "platform_token": PLATFORM_TOKEN},
        )
        transport = httpx.ASGITransport(app=create_app(ctx), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


PLATFORM_AUTH = {"Authorization": "Bearer s3cret-token"}


@asynccontextmanager
async def platform_api(
    database: Database,
) -> AsyncIterator[tuple[httpx.AsyncClient, ControllerService]]:
    """The REST API of a controller with one table, ``bj1`` (clubhouse), in-process, as a
    platform calls it (its bearer token), and the controller (to index rounds)."""
    log, fanout = EventLog(database), Fanout(bus=None)
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse")])
    async with ControllerService(config, None, log, fanout, timers=False) as controller:
        ctx = WebContext(fanout=fanout, log=log, db=database, controller=controller)
        ctx.extras["platform_token"] = "s3cret-token"
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver", headers=PLATFORM_AUTH
        ) as client:
            yield client, controller
