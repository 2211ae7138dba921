"""Fixtures of the console tests: the real app and database, the controller TEST DOUBLE."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from chromium_support import CHROMIUM, CHROMIUM_ARGS, require_chromium
from console_double import InMemoryController
from console_helpers import PASSWORD, ROLES, TABLES, context, fast_hasher
from fastapi import FastAPI
from playwright.async_api import Browser, async_playwright

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app


@pytest.fixture
def fanout() -> Fanout:
    return Fanout(bus=None)


@pytest.fixture
def controller(fanout: Fanout) -> InMemoryController:
    return InMemoryController(fanout, TABLES)


@pytest.fixture
async def people(database: Database) -> UserStore:
    """One user per role, named after it, all with PASSWORD."""
    store = UserStore(database, hasher=fast_hasher())
    for role in ROLES:
        await store.add(role, PASSWORD, role, by="test")
    return store


@pytest.fixture
async def app(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> FastAPI:
    return create_app(context(database, fanout, controller))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless (the browser tests)."""
    require_chromium()
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            await chromium.close()
