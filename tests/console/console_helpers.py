"""Helpers shared by the console tests (a plain module: test modules import it by name)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
from argon2 import PasswordHasher
from http_support import form_token

import studio.console  # registers the users/sessions tables before create_all
from studio.console import ConsoleSettings
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebContext

if TYPE_CHECKING:
    from playwright.async_api import Page

assert studio.console.install is not None

TABLES = ["bj1", "bj2"]
PASSWORD = "correct horse battery"
ROLES = ["viewer", "dealer", "manager", "admin"]


def fast_hasher() -> PasswordHasher:
    # Real argon2id, smaller cost so the many logins of the suite stay quick. The
    # production parameters are tested in test_console_users.py.
    return PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


def settings(**changes: Any) -> ConsoleSettings:
    """Console settings with the cheap argon2 cost of fast_hasher (no rehash at login)."""
    return ConsoleSettings(
        argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1, **changes
    )


def context(database: Database, fanout: Fanout, controller: Any, **changes: Any) -> WebContext:
    return WebContext(
        fanout=fanout,
        db=database,
        controller=controller,
        extras={"console": settings(**changes)},
    )


async def login(http: httpx.AsyncClient, username: str, password: str = PASSWORD) -> str:
    """Log in through the form like a browser; return the session's CSRF token."""
    page = await http.get("/console/login")
    assert page.status_code == 200
    response = await http.post(
        "/console/login",
        data={"username": username, "password": password, "csrf_token": form_token(page.text)},
    )
    assert response.status_code == 303, response.text
    token = http.cookies.get("studio_csrf")
    assert token
    return token


async def sign_in(page: Page, base: str, username: str = "manager") -> None:
    """Sign ``page`` in to the console at ``base`` through its login form, as a person
    does, and wait until the signed-in page (its logout button) is drawn."""
    await page.goto(f"{base}/console/login")
    await page.fill("input[name=username]", username)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("#login-form button[type=submit]")
    await page.wait_for_selector("#logout")
