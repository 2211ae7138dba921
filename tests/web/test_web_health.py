"""``/api/health``: liveness for anyone, the details for the REST reads' callers only.

It answered anyone with the exact build and the number of open streams, while the REST
reads need a console session or the platform token (docs/security.md).
"""

from __future__ import annotations

import re

import httpx
from argon2 import PasswordHasher

import studio.console  # registers the users/sessions tables before create_all
from studio import __version__
from studio.console import ConsoleSettings, UserStore
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, create_app

assert studio.console.install is not None

PASSWORD = "correct horse battery"
TOKEN = "t" * 40
DETAILS = {"status": "ok", "version": __version__, "listeners": 0}


def _client(database: Database) -> httpx.AsyncClient:
    settings = ConsoleSettings(argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1)
    ctx = WebContext(
        fanout=Fanout(bus=None),
        log=EventLog(database),
        db=database,
        extras={"console": settings, "platform_token": TOKEN},
    )
    transport = httpx.ASGITransport(app=create_app(ctx))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def test_anyone_is_told_it_is_alive_and_nothing_more(database: Database) -> None:
    await database.create_all()
    async with _client(database) as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "x"}):
            answer = await http.get("/api/health", headers=headers)
            assert answer.status_code == 200
            assert answer.json() == {"status": "ok"}, headers


async def test_the_platform_token_reads_the_details(database: Database) -> None:
    await database.create_all()
    async with _client(database) as http:
        answer = await http.get("/api/health", headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200
        assert answer.json() == DETAILS


async def test_a_console_session_reads_the_details(database: Database) -> None:
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await UserStore(database, hasher=hasher).add("eve", PASSWORD, "viewer", by="test")
    async with _client(database) as http:
        page = await http.get("/console/login")
        match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert match
        form = {"username": "eve", "password": PASSWORD, "csrf_token": match.group(1)}
        assert (await http.post("/console/login", data=form)).status_code == 303
        answer = await http.get("/api/health")
        assert answer.status_code == 200
        assert answer.json() == DETAILS
