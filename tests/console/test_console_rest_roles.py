"""The console and the REST API ask the same role for the same action (real service).

A review: acknowledging an alert needed a dealer on the console but a manager on the REST
API. The documented role (docs/console.md, *Roles*) is the dealer's: the dealer at the
table acknowledges that an alert is seen, a manager resolves it. Both now ask a dealer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from console_helpers import context, login
from fastapi import FastAPI
from test_console_hand_results import Clock, Round

from studio.config import StudioConfig, TableSettings
from studio.console import UserStore
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app


@pytest.fixture
async def alerted(database: Database, people: UserStore) -> AsyncIterator[tuple[Round, FastAPI]]:
    settings = TableSettings(id="bj1", ruleset="clubhouse", single_source=True)
    clock, fanout = Clock(), Fanout(bus=None)
    config = StudioConfig(tables=[settings])
    async with ControllerService(
        config, None, EventLog(database), fanout, clock=clock, timers=False
    ) as svc:
        table = Round(svc, clock)
        await table.open()
        await table.stand()
        await table.card("5H")  # after the round: dealer_rule_violation, bj1-A1
        await table.card("6H")  # bj1-A2
        assert [a["alert_id"] for a in svc.alerts(state="raised")] == ["bj1-A1", "bj1-A2"]
        yield table, create_app(context(database, fanout, svc))


def client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_a_dealer_acknowledges_on_the_console_and_on_the_rest_api(
    alerted: tuple[Round, FastAPI],
) -> None:
    table, app = alerted
    async with client(app) as viewer, client(app) as dealer, client(app) as stranger:
        viewer_token, dealer_token = await login(viewer, "viewer"), await login(dealer, "dealer")
        headers = {"x-csrf-token": viewer_token, "accept": "application/json"}
        for url in ("/api/alerts/bj1-A1/acknowledge", "/console/alerts/bj1-A1/acknowledge"):
            refused = await viewer.post(url, headers=headers)
            assert refused.status_code == 403, (url, refused.text)
        assert [a["alert_id"] for a in table.svc.alerts(state="raised")] == ["bj1-A1", "bj1-A2"]

        headers = {"x-csrf-token": dealer_token, "accept": "application/json"}
        by_rest = await dealer.post("/api/alerts/bj1-A1/acknowledge", headers=headers)
        assert by_rest.status_code == 200, by_rest.text
        assert by_rest.json()["state"] == "acknowledged"
        by_console = await dealer.post("/console/alerts/bj1-A2/acknowledge", headers=headers)
        assert by_console.status_code == 200, by_console.text
        assert [a["alert_id"] for a in table.svc.alerts(state="acknowledged")] == [
            "bj1-A1",
            "bj1-A2",
        ]
        # Resolving stays a manager's, on both.
        body = {"action": "void", "reason": "drawn past the rule"}
        resolve = await dealer.post("/api/alerts/bj1-A1/resolve", json=body, headers=headers)
        assert resolve.status_code == 403
        # And the REST API's answers, a refusal too, are not to be cached.
        assert resolve.headers.get_list("cache-control") == ["no-store"]
        refused = await stranger.get("/api/alerts")
        assert refused.status_code == 401
        assert refused.headers.get("x-content-type-options") == "nosniff"
