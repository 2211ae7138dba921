"""Alerts raised and resolved by hand on a real two-table controller, a count of the
alerts whose message is built, and a manager logged in to its REST API: what the tests of
the alert reads and actions share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from http_support import PASSWORD, form_token

from studio.config import StudioConfig, TableSettings
from studio.console import ConsoleSettings, UserStore
from studio.contract.rounds import rfc3339
from studio.controller import ControllerService
from studio.controller.alerts import Alert, AlertCode
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, create_app

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
DEVICES = [{"id": "shoe", "kind": "shoe"}]


@asynccontextmanager
async def two_tables(database: Database) -> AsyncIterator[ControllerService]:
    """A controller (no broker, no timers) of the clubhouse tables bj1 and bj2."""
    tables = [TableSettings(id=t, ruleset="clubhouse", devices=DEVICES) for t in ("bj1", "bj2")]
    async with ControllerService(
        StudioConfig(tables=tables), None, EventLog(database), Fanout(bus=None), timers=False
    ) as service:
        yield service


@asynccontextmanager
async def manager_api(
    database: Database, service: ControllerService
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    """A manager ("boss") logged in through the console's form to the web app of
    ``service`` (real argon2id, a small cost): the client, and the CSRF header its API
    requests carry."""
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await UserStore(database, hasher=hasher).add("boss", PASSWORD, "manager", by="test")
    settings = ConsoleSettings(argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1)
    ctx = WebContext(
        fanout=service.fanout, db=database, controller=service, extras={"console": settings}
    )
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        page = await http.get("/console/login")
        form = {"username": "boss", "password": PASSWORD, "csrf_token": form_token(page.text)}
        assert (await http.post("/console/login", data=form)).status_code == 303
        yield http, {"X-CSRF-Token": http.cookies["studio_csrf"]}


def raise_alert(
    service: ControllerService, table: str, second: int, code: AlertCode = AlertCode.CUT_CARD
) -> Alert:
    """An alert ``second`` seconds after T0 (a cut card by default: it pauses nothing)."""
    return service.tables[table].alerts.raise_alert(
        code,
        f"{code} seen",
        ts=T0 + timedelta(seconds=second),
        round_id=None,
        evidence=[{"shoe": {"cards_left": 60}}],
    )


def resolve(alert: Alert, second: int) -> None:
    """Resolved by a manager ``second`` seconds after T0."""
    alert.state = "resolved"
    alert.resolution = {
        "action": "accept",
        "by": "boss",
        "at": rfc3339(T0 + timedelta(seconds=second)),
        "reason": "checked it",
        "card": None,
        "before": {},
    }


def count_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the alerts whose message is built from now on, in order."""
    ids: list[str] = []
    original = Alert.message_model

    def spy(self: Alert, *, concealed: bool = False, offered: list[str] | None = None) -> Any:
        ids.append(self.alert_id)
        return original(self, concealed=concealed, offered=offered)

    monkeypatch.setattr(Alert, "message_model", spy)
    return ids
