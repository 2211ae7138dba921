"""Alerts raised and resolved by hand on a real two-table controller, and a count of the
alerts whose message is built: what the tests of the alert reads share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studio.config import StudioConfig, TableSettings
from studio.contract.rounds import rfc3339
from studio.controller import ControllerService
from studio.controller.alerts import Alert, AlertCode
from studio.store import Database, EventLog
from studio.streams import Fanout

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

    def spy(self: Alert, *, concealed: bool = False) -> Any:
        ids.append(self.alert_id)
        return original(self, concealed=concealed)

    monkeypatch.setattr(Alert, "message_model", spy)
    return ids
