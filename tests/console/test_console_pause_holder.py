"""A second person's pause is refused, telling them whose pause holds (table logic 28).

Up to logic 27 a pause while a person's pause held was taken: the table page then showed
only the last one's name and reason, and one resume lifted both pauses. Now the REST API
answers it 409 as it answers a resume of no pause, and the console as it answers that one
(its message, nothing changed); the table page still names the pause in force.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator

import pytest
from console_helpers import login
from fastapi import FastAPI
from served_table import client_of, served_app
from test_console_hand_results import Round

from studio.console import UserStore
from studio.console.pages import pause_of
from studio.store import Database


@pytest.fixture
async def dealt(database: Database, people: UserStore) -> AsyncIterator[tuple[Round, FastAPI]]:
    async with served_app(database, Round.open) as (table, app, _):  # a round in play
        yield table, app


async def test_the_second_person_is_told_whose_pause_holds(dealt: tuple[Round, FastAPI]) -> None:
    table, app = dealt
    async with client_of(app) as dealer, client_of(app) as manager:
        dealer_headers = {
            "x-csrf-token": await login(dealer, "dealer"),
            "accept": "application/json",
        }
        headers = {"x-csrf-token": await login(manager, "manager"), "accept": "application/json"}
        # A resume of no pause: how a refusal of a table action reads on each.
        by_rest = await manager.post(
            "/api/tables/bj1/resume", json={"reason": "go on"}, headers=headers
        )
        by_console = await manager.post(
            "/console/tables/bj1/resume", data={"reason": "go on"}, headers=headers
        )
        assert (by_rest.status_code, by_console.status_code) == (409, 400)
        assert "not paused by a manager" in by_rest.json()["detail"]
        assert by_console.json()["detail"] == by_rest.json()["detail"]

        paused = await dealer.post(
            "/api/tables/bj1/pause", json={"reason": "player dispute"}, headers=dealer_headers
        )
        assert paused.status_code == 200, paused.text
        again = await manager.post(
            "/api/tables/bj1/pause", json={"reason": "camera check"}, headers=headers
        )
        assert again.status_code == 409, again.text  # was 200, taken
        assert again.json()["detail"].startswith("already paused by dealer since ")
        assert again.json()["detail"].endswith(": player dispute; a resume lifts that pause")
        by_form = await manager.post(
            "/console/tables/bj1/pause", data={"reason": "camera check"}, headers=headers
        )
        assert by_form.status_code == 400, by_form.text
        assert by_form.json()["detail"] == again.json()["detail"]

        state = (await manager.get("/api/tables/bj1")).json()
        assert state["manager_pause"]["by"] == "dealer"
        assert state["manager_pause"]["why"] == "player dispute"
        page = html.unescape((await manager.get("/console/tables/bj1")).text)
        [shown] = re.findall(r"Paused by [^<]*<time>[^<]*</time>: <q>[^<]*</q>", page)
        assert shown.startswith("Paused by dealer at ") and shown.endswith("<q>player dispute</q>")
        # The one pause in force: one resume lifts it.
        resumed = await manager.post(
            "/api/tables/bj1/resume", json={"reason": "dispute settled"}, headers=headers
        )
        assert resumed.status_code == 200, resumed.text
        assert not table.svc.tables["bj1"].paused


def test_the_pause_shown_is_the_one_the_table_says_holds() -> None:
    held = {"by": "ann", "why": "camera fault", "at": "2026-12-07T12:00:00.000Z"}
    # A log of logic 27 may hold a later pause by someone else: the table names the holder.
    later = {"type": "manager_action", "ts": "2026-12-07T12:01:00.000Z"}
    later["data"] = {"verb": "pause", "by": "bob", "why": "dealer change"}
    state = {"table": "bj1", "paused": True, "manager_pause": held}
    assert pause_of(state, [], [later]) == {"person": held, "alerts": []}
    # Paused by alerts alone: no person, whatever the events say.
    alert = {"table": "bj1", "alert_id": "bj1-A1", "code": "integrity"}
    state = {"table": "bj1", "paused": True, "manager_pause": None}
    assert pause_of(state, [alert], [later]) == {"person": None, "alerts": ["bj1-A1"]}
    # A summary without the key (an older controller's): the round's last pause, as before.
    state = {"table": "bj1", "paused": True}
    assert pause_of(state, [], [later])["person"]["by"] == "bob"
