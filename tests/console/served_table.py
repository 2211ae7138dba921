"""Table bj1 (clubhouse, single source) of a real ``ControllerService`` on a test clock,
served by the whole web app through an in-process HTTP client: the set-up of the console
tests that act on a real table (a stale cancel, an alert shown, a demoted manager)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
from console_helpers import context
from test_console_hand_results import Clock, Round

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app


@asynccontextmanager
async def served_table(
    database: Database, prepare: Callable[[Round], Awaitable[object]]
) -> AsyncIterator[tuple[Round, httpx.AsyncClient, EventLog]]:
    """The table, ``prepare``d (its round opened, bets taken...) before the app serves it."""
    settings = TableSettings(id="bj1", ruleset="clubhouse", single_source=True)
    clock, fanout, log = Clock(), Fanout(bus=None), EventLog(database)
    config = StudioConfig(tables=[settings])
    async with ControllerService(config, None, log, fanout, clock=clock, timers=False) as svc:
        table = Round(svc, clock)
        await prepare(table)
        app = create_app(context(database, fanout, svc))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield table, http, log
