"""Reading alerts costs what is asked for, not the whole history.

Every alert a table ever raised stays in memory (a start replays them from the log). Until
2026-12-05 ``ControllerService.alerts()`` built every one of them (``message_model``) and only
then filtered: 75 ms at 5,000 alerts, 237 ms at 20,000, on every console page. Counted here,
not timed: how many alerts are built for each read.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_support import T0, count_built, raise_alert, resolve, two_tables

from studio.controller import ControllerService, Input, TableController
from studio.controller.alerts import Alert, AlertBook, AlertCode
from studio.errors import StudioError
from studio.rules.ruleset import ruleset_from_spec
from studio.store import Database

sys.path.insert(0, str(Path(__file__).parent))
from crash_harness import TABLE, generate, snapshot


@pytest.fixture
async def service(database: Database) -> AsyncIterator[ControllerService]:
    async with two_tables(database) as svc:
        yield svc


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the alerts whose message is built, in order."""
    return count_built(monkeypatch)


def history(svc: ControllerService, resolved: int, open_: int) -> list[Alert]:
    """``resolved`` alerts raised and resolved, then ``open_`` still open, on bj1."""
    alerts = [raise_alert(svc, "bj1", i) for i in range(resolved + open_)]
    for i, alert in enumerate(alerts[:resolved]):
        resolve(alert, 10_000 + i)
    return alerts


async def test_the_open_alerts_build_no_resolved_alert(
    service: ControllerService, built: list[str]
) -> None:
    alerts = history(service, resolved=300, open_=2)
    opened = [a.alert_id for a in alerts[300:]]
    assert [a["alert_id"] for a in service.alerts(state="open")] == opened
    assert built == opened  # before: all 302 built, 300 of them thrown away
    built.clear()
    assert [a["alert_id"] for a in service.alerts(state="raised", table="bj1")] == opened
    assert service.alerts(state="acknowledged") == [] and built == opened
    built.clear()
    assert service.find_alert_table(opened[0]) == "bj1" and built == []


async def test_a_limit_keeps_the_newest_listed_as_without_one(
    service: ControllerService, built: list[str]
) -> None:
    # bj1 raises at even seconds, bj2 at odd ones; some resolved, some acknowledged.
    raised = [raise_alert(service, "bj1" if i % 2 == 0 else "bj2", i) for i in range(12)]
    for alert in raised[:6]:
        resolve(alert, 100)
    raised[9].state = "acknowledged"
    everything = service.alerts()
    assert (
        [a["alert_id"] for a in everything]
        == [
            *(a.alert_id for a in raised[0::2]),  # table by table, each in the order raised
            *(a.alert_id for a in raised[1::2]),
        ]
    )
    built.clear()
    newest = service.alerts(limit=3)
    # The three newest (seconds 9, 10, 11), bj1's then bj2's, each in the order raised.
    assert [a["alert_id"] for a in newest] == [
        a.alert_id for a in (raised[10], raised[9], raised[11])
    ]
    assert newest == [a for a in everything if a["alert_id"] in {x["alert_id"] for x in newest}]
    assert sorted(built) == sorted(a["alert_id"] for a in newest)  # only those three built
    built.clear()
    assert [a["alert_id"] for a in service.alerts(state="resolved", limit=2)] == [
        raised[4].alert_id,
        raised[5].alert_id,
    ]
    assert len(built) == 2
    assert [a["alert_id"] for a in service.alerts(state="open", table="bj2", limit=2)] == [
        raised[9].alert_id,
        raised[11].alert_id,
    ]
    assert [a["alert_id"] for a in service.alerts(state="acknowledged", limit=5)] == [
        raised[9].alert_id
    ]
    assert service.alerts(limit=100) == everything


def old_resolved_list(svc: ControllerService, limit: int) -> list[dict[str, Any]]:
    """The console's resolved list as it was made before: every resolved alert built, then
    sorted by when resolved (the last first), stable."""
    every = [
        a.message_model().model_dump(mode="json")
        for c in svc.tables.values()
        for a in c.alerts.all()
        if a.state == "resolved"
    ]
    every.sort(key=lambda a: str((a.get("resolution") or {}).get("at", a.get("ts"))), reverse=True)
    return every[:limit]


async def test_the_last_resolved_are_found_without_building_the_rest(
    service: ControllerService, built: list[str]
) -> None:
    alerts = history(service, resolved=200, open_=3)
    late = raise_alert(service, "bj2", 5)  # raised early, resolved last
    resolve(late, 20_000)
    # Three resolved by one action: the same time, listed in the order raised.
    for alert in alerts[200:]:
        resolve(alert, 20_000)
    expected = old_resolved_list(service, 50)
    built.clear()
    last = service.resolved_alerts(limit=50)
    assert last == expected
    assert [a["alert_id"] for a in last[:4]] == [
        *(a.alert_id for a in alerts[200:]),
        late.alert_id,
    ]
    assert len(built) == 50  # before: every resolved alert (204) was built
    assert service.resolved_alerts(table="bj2", limit=5) == [
        late.message_model().model_dump(mode="json")
    ]
    assert service.resolved_alerts(limit=2) == expected[:2]
    assert service.resolved_alerts(limit=0) == []


def test_the_book_keeps_its_open_alerts_apart_whatever_changes_them() -> None:
    book = AlertBook("bj1")
    chance = random.Random(7)
    codes = list(AlertCode)
    for i in range(400):
        book.raise_alert(
            chance.choice(codes), "x", ts=T0 + timedelta(seconds=i), round_id=None, evidence=[]
        )
        for alert in chance.sample(book.all(), min(3, len(book.all()))):
            if alert.state == "raised" and chance.random() < 0.3:
                book.acknowledge(alert.alert_id, "boss")
            elif chance.random() < 0.2:
                alert.state = "resolved"  # as the table resolves them
        assert book.open_alerts() == [a for a in book.all() if a.open]
        assert book.pausing() == [a for a in book.all() if a.open and a.pauses]
    resolved = [a for a in book.all() if not a.open]
    assert sorted(book.last_resolved(), key=book.all().index) == resolved
    assert book.matching("resolved") == resolved
    assert list(book.newest("acknowledged")) == [
        a for a in reversed(book.all()) if a.state == "acknowledged"
    ]


def test_a_table_deciding_never_walks_its_alert_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolutions (void, accept, correct) and shoe loads look at the round's own alerts
    and at counters; until 2026-12-05 each built the list of every alert ever raised, and
    one looked an alert up in it by equality of all its fields."""
    inputs, expected = generate(200, seed=11)

    def walked(book: AlertBook) -> list[Alert]:
        raise AssertionError("the table walked every alert it ever raised")

    monkeypatch.setattr(AlertBook, "all", walked)
    table = TableController(TABLE, ruleset_from_spec(TABLE.ruleset), round_gap=1.0)
    resolutions = 0
    for item in inputs:
        resolutions += item["data"].get("verb") == "resolve"
        with contextlib.suppress(StudioError):  # a request the script knows is refused
            table.handle(Input(item["kind"], item["data"], datetime.fromisoformat(item["ts"])))
    monkeypatch.undo()
    assert resolutions > 10
    assert snapshot(table) == expected
