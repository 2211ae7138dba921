"""The console and the REST API ask the same role for the same action (real service).

A review: acknowledging an alert needed a dealer on the console but a manager on the REST
API. The documented role (docs/console.md, *Roles*) is the dealer's: the dealer at the
table acknowledges that an alert is seen, a manager resolves it. Both now ask a dealer.

A later review: pausing a table was a dealer's on the console but a manager's on the REST
API (403 "this needs the manager role or higher"). The roles table makes it the dealer's (a
safety action at the table): both now ask a dealer; resuming stays a manager's on both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from console_helpers import login
from fastapi import FastAPI
from served_table import client_of, served_app
from test_console_hand_results import Round

from studio.console import UserStore
from studio.store import Database


async def _two_alerts(table: Round) -> None:
    await table.open()
    await table.stand()
    await table.card("5H")  # after the round: dealer_rule_violation, bj1-A1
    await table.card("6H")  # bj1-A2
    assert [a["alert_id"] for a in table.svc.alerts(state="raised")] == ["bj1-A1", "bj1-A2"]


@pytest.fixture
async def alerted(database: Database, people: UserStore) -> AsyncIterator[tuple[Round, FastAPI]]:
    async with served_app(database, _two_alerts) as (table, app, _):
        yield table, app


async def test_a_dealer_acknowledges_on_the_console_and_on_the_rest_api(
    alerted: tuple[Round, FastAPI],
) -> None:
    table, app = alerted
    async with client_of(app) as viewer, client_of(app) as dealer, client_of(app) as stranger:
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


async def _dealing(table: Round) -> None:
    await table.open()  # a round in play, seat 1 to act
    assert not table.svc.alerts(state="raised")


@pytest.fixture
async def dealt(database: Database, people: UserStore) -> AsyncIterator[tuple[Round, FastAPI]]:
    async with served_app(database, _dealing) as (table, app, _):
        yield table, app


def paused_by_manager(table: Round) -> bool:
    return table.svc.tables["bj1"].manual_pause


async def test_a_dealer_pauses_on_the_console_and_on_the_rest_api(
    dealt: tuple[Round, FastAPI],
) -> None:
    table, app = dealt
    async with client_of(app) as viewer, client_of(app) as dealer, client_of(app) as manager:
        viewer_token = await login(viewer, "viewer")
        dealer_token = await login(dealer, "dealer")
        manager_token = await login(manager, "manager")
        reason = {"reason": "player dispute at the table"}

        def headers(token: str) -> dict[str, str]:
            return {"x-csrf-token": token, "accept": "application/json"}

        # A viewer may do neither.
        refused = await viewer.post(
            "/api/tables/bj1/pause", json=reason, headers=headers(viewer_token)
        )
        assert refused.status_code == 403, refused.text
        refused = await viewer.post(
            "/console/tables/bj1/pause", data=reason, headers=headers(viewer_token)
        )
        assert refused.status_code == 403, refused.text
        assert not paused_by_manager(table)

        # A dealer pauses through the REST API (was 403, "needs the manager role") ...
        by_rest = await dealer.post(
            "/api/tables/bj1/pause", json=reason, headers=headers(dealer_token)
        )
        assert by_rest.status_code == 200, by_rest.text
        assert paused_by_manager(table)
        # ... but does not resume, there nor on the console: a manager's.
        resumed = await dealer.post(
            "/api/tables/bj1/resume", json=reason, headers=headers(dealer_token)
        )
        assert resumed.status_code == 403, resumed.text
        resumed = await dealer.post(
            "/console/tables/bj1/resume", data=reason, headers=headers(dealer_token)
        )
        assert resumed.status_code == 403, resumed.text
        assert paused_by_manager(table)
        resumed = await manager.post(
            "/api/tables/bj1/resume", json=reason, headers=headers(manager_token)
        )
        assert resumed.status_code == 200, resumed.text
        assert not paused_by_manager(table)

        # And through the console, as before.
        by_console = await dealer.post(
            "/console/tables/bj1/pause", data=reason, headers=headers(dealer_token)
        )
        assert by_console.status_code in (200, 303), by_console.text
        assert paused_by_manager(table)


async def test_the_manager_actions_both_offer_are_refused_to_a_dealer_on_both(
    dealt: tuple[Round, FastAPI],
) -> None:
    """Every other table action the console and the REST API both offer (resume, shoe
    change, cancel round) is a manager's on both: a dealer is refused (403) on both and
    nothing changes."""
    table, app = dealt
    async with client_of(app) as dealer:
        token = await login(dealer, "dealer")
        headers = {"x-csrf-token": token, "accept": "application/json"}
        reason = {"reason": "not a dealer's to do"}
        round_id = table.svc.tables["bj1"].round_id
        pairs = [
            ("/api/tables/bj1/resume", "/console/tables/bj1/resume", {}),
            ("/api/tables/bj1/shoe-change", "/console/tables/bj1/shoe", {}),
            (
                "/api/tables/bj1/cancel-round",
                "/console/tables/bj1/cancel",
                {"round_id": round_id},
            ),
        ]
        for rest, console, extra in pairs:
            answer = await dealer.post(rest, json={**reason, **extra}, headers=headers)
            assert answer.status_code == 403, (rest, answer.text)
            form = {**reason, **extra, "confirm": "yes"}
            answer = await dealer.post(console, data=form, headers=headers)
            assert answer.status_code == 403, (console, answer.text)
        assert table.svc.tables["bj1"].round_id == round_id
        assert table.svc.tables["bj1"].phase == "dealing"
