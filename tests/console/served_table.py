"""Table bj1 (clubhouse, single source) of a real ``ControllerService`` on a test clock,
served by the whole web app: the set-up of the console tests that act on a real table (a
stale cancel, an alert shown, a demoted manager, a second pause, the roles of REST and
console)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
from console_helpers import context
from fastapi import FastAPI
from test_console_hand_results import Clock, Round

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app


@asynccontextmanager
async def served_app(
    database: Database, prepare: Callable[[Round], Awaitable[object]]
) -> AsyncIterator[tuple[Round, FastAPI, EventLog]]:
    """The table, ``prepare``d (its round opened, bets taken...), and the app serving it."""
    settings = TableSettings(id="bj1", ruleset="clubhouse", single_source=True)
    clock, fanout, log = Clock(), Fanout(bus=None), EventLog(database)
    config = StudioConfig(tables=[settings])
    async with ControllerService(config, None, log, fanout, clock=clock, timers=False) as svc:
        table = Round(svc, clock)
        await prepare(table)
        yield table, create_app(context(database, fanout, svc)), log


def client_of(app: FastAPI) -> httpx.AsyncClient:
    """An in-process HTTP client of ``app`` (one per person logged in)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


@asynccontextmanager
async def served_table(
    database: Database, prepare: Callable[[Round], Awaitable[object]]
) -> AsyncIterator[tuple[Round, httpx.AsyncClient, EventLog]]:
    """The table, ``prepare``d, and one client of the app serving it."""
    async with served_app(database, prepare) as (table, app, log), client_of(app) as http:
        yield table, http, log
