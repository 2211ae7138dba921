"""A busy floor's messages cost a live page a few fragment fetches, not one each, in the
real Chromium (headless), and the page still ends up showing the last state.

Until 2026-12-07 every bus message of any table led to a fetch of the overview (each
deal is two: the round event and the table state), several a second per browser, more
with more tables. The fetches are counted by the server (an ASGI wrapper around the app),
not guessed from timing.

The controller is the in-memory TEST DOUBLE; the database, app, fan-out, WebSocket and
browser are real.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, sign_in
from playwright.async_api import Browser, Page

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]

TIMEOUT_MS = 20_000
TABLES = ["co1", "co2"]
CARDS = ["AS", "KD", "7C", "9H", "2S", "QH", "3D", "8C", "4H", "5S"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Counted:
    """Every HTTP request's path, noted as the app gets it (a middleware)."""

    def __init__(self, app: Any, paths: list[str]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(str(scope["path"]))
        await self.app(scope, receive, send)


class Requests:
    def __init__(self) -> None:
        self.paths: list[str] = []

    def count(self, path: str) -> int:
        return self.paths.count(path)


@contextlib.asynccontextmanager
async def served(database: Database) -> AsyncIterator[tuple[str, InMemoryController, Requests]]:
    fanout = Fanout(bus=None)
    controller = InMemoryController(fanout, TABLES)
    users = UserStore(database, hasher=fast_hasher())
    await users.add("manager", PASSWORD, "manager", by="test")
    app = create_app(context(database, fanout, controller))
    counted = Requests()
    app.add_middleware(Counted, paths=counted.paths)
    async with WebServer(app, port=0) as server:
        try:
            yield server.url, controller, counted
        finally:
            fanout.end_streams()


@contextlib.asynccontextmanager
async def live_page(browser: Browser, base: str, path: str) -> AsyncIterator[Page]:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        page = await ctx.new_page()
        await sign_in(page, base)
        await page.goto(f"{base}{path}")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        await page.wait_for_timeout(500)  # the catch-up fetch at the socket's opening
        yield page
    finally:
        await ctx.close()


async def burst(controller: InMemoryController, tables: list[str], deals: int) -> int:
    """``deals`` cards dealt 40 ms apart, round robin over ``tables``: the messages sent."""
    for table in tables:
        await controller.start_round(table, {1: "p-1"})
    for n in range(deals):
        await controller.deal(tables[n % len(tables)], 1, CARDS[n % len(CARDS)])
        await asyncio.sleep(0.04)
    return 2 * deals  # a deal's round event and its table state


def cards_left(controller: InMemoryController, table: str) -> str:
    return str(controller.table_state(table)["shoe"]["cards_left"])


async def test_a_burst_on_the_overview_costs_few_fetches_and_shows_the_last_state(
    browser: Browser, database: Database
) -> None:
    async with (
        served(database) as (base, controller, counted),
        live_page(browser, base, "/console/") as page,
    ):
        before = counted.count("/console/fragments/overview")
        messages = await burst(controller, TABLES, deals=30)
        for table in TABLES:
            await page.locator(
                f'[data-table-card="{table}"] [data-field="cards-left"]',
                has_text=cards_left(controller, table),
            ).wait_for()
        await page.wait_for_timeout(800)  # any fetch still to come is counted
        fetches = counted.count("/console/fragments/overview") - before
        # 60 messages and more (30 deals) in 1.2 s or more: one fetch per 250 ms at most.
        # Before: one per message or two (a fetch 80 ms after one), here 20 to 60.
        assert messages == 60
        assert 1 <= fetches <= 10, fetches
        # The last state shown, still: each table's last card is in its box.
        for table in TABLES:
            shown = page.locator(f'[data-table-card="{table}"] [data-field="cards-left"]')
            assert await shown.inner_text() == cards_left(controller, table)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/console/tables/co1", "/console/fragments/tables/co1"),
        ("/console/dealer/co1", "/console/fragments/dealer/co1"),
        ("/console/alerts?table=co1", "/console/fragments/alerts"),
    ],
)
async def test_a_page_of_one_table_fetches_nothing_for_another_table_s_messages(
    browser: Browser, database: Database, path: str, fragment: str
) -> None:
    async with (
        served(database) as (base, controller, counted),
        live_page(browser, base, path) as page,
    ):
        before = counted.count(fragment)
        await burst(controller, ["co2"], deals=10)
        await page.wait_for_timeout(800)
        assert counted.count(fragment) == before
        # Its own table's messages are still heard, coalesced as on the overview.
        await burst(controller, ["co1"], deals=10)
        await page.wait_for_timeout(800)
        assert 1 <= counted.count(fragment) - before <= 5, counted.count(fragment) - before
