"""``GET /api/alerts`` answers the newest ``limit`` alerts (100 unless asked; 1 to 1000).

Until 2026-12-05 it answered every alert the studio ever raised, built one by one on the
event loop (237 ms at 20,000 alerts), however few the reader wanted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from alert_support import raise_alert, resolve, two_tables
from http_support import PLATFORM, PLATFORM_TOKEN

from studio.controller import ControllerService
from studio.store import Database
from studio.web import create_app
from studio.web.context import WebContext


@pytest.fixture
async def service(database: Database) -> AsyncIterator[ControllerService]:
    async with two_tables(database) as svc:
        yield svc


@pytest.fixture
async def http(database: Database, service: ControllerService) -> AsyncIterator[httpx.AsyncClient]:
    ctx = WebContext(
        fanout=service.fanout,
        db=database,
        controller=service,
        extras={"platform_token": PLATFORM_TOKEN},
    )
    transport = httpx.ASGITransport(app=create_app(ctx), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


def alerts(service: ControllerService, count: int) -> list[str]:
    """``count`` alerts a second apart, bj1 and bj2 in turn; every third resolved."""
    ids = []
    for i in range(count):
        alert = raise_alert(service, "bj1" if i % 2 == 0 else "bj2", i)
        if i % 3 == 0:
            resolve(alert, 0)
        ids.append(alert.alert_id)
    return ids


def listed(ids: list[str]) -> list[str]:
    """As the API lists alerts: table by table, each table's in the order raised."""
    return [i for i in ids if i.startswith("bj1-")] + [i for i in ids if i.startswith("bj2-")]


async def test_the_newest_hundred_unless_asked(
    service: ControllerService, http: httpx.AsyncClient
) -> None:
    ids = alerts(service, 150)
    default = await http.get("/api/alerts", headers=PLATFORM)
    assert default.status_code == 200
    assert [a["alert_id"] for a in default.json()] == listed(ids[-100:])  # before: all 150
    few = await http.get("/api/alerts", params={"limit": 3}, headers=PLATFORM)
    assert [a["alert_id"] for a in few.json()] == listed(ids[-3:])
    every = await http.get("/api/alerts", params={"limit": 1000}, headers=PLATFORM)
    assert [a["alert_id"] for a in every.json()] == listed(ids)
    # The filters apply first: the newest of what they keep.
    resolved = [i for n, i in enumerate(ids) if n % 3 == 0]
    answer = await http.get(
        "/api/alerts", params={"state": "resolved", "limit": 4}, headers=PLATFORM
    )
    assert [a["alert_id"] for a in answer.json()] == listed(resolved[-4:])
    opened = [i for n, i in enumerate(ids) if n % 3 and i.startswith("bj2-")]
    answer = await http.get(
        "/api/alerts", params={"state": "open", "table": "bj2", "limit": 5}, headers=PLATFORM
    )
    assert [a["alert_id"] for a in answer.json()] == opened[-5:]


async def test_a_limit_out_of_range_is_422(http: httpx.AsyncClient) -> None:
    for limit in ("0", "-1", "1001", "all"):
        answer = await http.get("/api/alerts", params={"limit": limit}, headers=PLATFORM)
        assert answer.status_code == 422, (limit, answer.text)
        assert answer.json()["detail"][0]["loc"] == ["query", "limit"]
