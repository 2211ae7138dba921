"""A manager disabled or demoted while their action waits for the table acts no more (real service).

A review: the role was checked when the request started (``require_role``); the action then
waited for the table's lock (behind an input whose write was slow) and was applied, logged
as the manager's, after an admin had made them a viewer (or disabled them). Now the account
is read again under the table's lock, just before the action: refused (403), logged as a
refused manager action, nothing changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass

import httpx
import pytest
from console_helpers import login
from served_table import served_table
from test_console_hand_results import Round

from studio.console import UserStore
from studio.store import Database, EventLog

JSON = {"accept": "application/json"}


@dataclass
class Studio:
    table: Round
    http: httpx.AsyncClient
    log: EventLog
    people: UserStore


@pytest.fixture
async def dealing(database: Database, people: UserStore) -> AsyncIterator[Studio]:
    """Table bj1 of a real service, round bj1-R1 dealt, a 10.00 bet on seat 1."""
    async with served_table(database, Round.open) as (table, http, log):
        yield Studio(table, http, log, people)


async def while_it_waits(
    studio: Studio, request: Awaitable[httpx.Response], change: Awaitable[object]
) -> httpx.Response:
    """Send ``request`` while the table's lock is held (an input before it being written),
    make ``change`` once it waits for the lock, then let it go on."""
    lock = studio.table.svc._locks["bj1"]
    async with lock:
        sent = asyncio.ensure_future(request)
        async with asyncio.timeout(10):
            while not lock._waiters:  # past its role check, waiting for the table
                await asyncio.sleep(0.01)
        await change
    async with asyncio.timeout(10):
        return await sent


async def refusals(log: EventLog) -> list[tuple[str, str]]:
    kinds = ["manager.action", "manager.refused"]
    records = await log.read(table_id="bj1", kinds=kinds)
    return [(r.kind, str(r.payload.get("error", ""))) for r in records]


async def test_a_manager_made_a_viewer_while_the_cancel_waits_cancels_nothing(
    dealing: Studio,
) -> None:
    token = await login(dealing.http, "manager")
    before = dealing.table.svc.table_state("bj1")
    cancel = dealing.http.post(
        "/api/tables/bj1/cancel-round",
        json={"reason": "manager cancels", "round_id": "bj1-R1"},
        headers={"x-csrf-token": token},
    )
    demote = dealing.people.set_role("manager", "viewer", by="console:admin", reason="demoted")
    answer = await while_it_waits(dealing, cancel, demote)
    assert answer.status_code == 403, answer.text
    said = "manager no longer has the manager role (now viewer): the action was not taken"
    assert answer.json()["detail"] == said
    state = dealing.table.svc.table_state("bj1")
    assert (state["round_id"], state["phase"]) == ("bj1-R1", before["phase"])  # not cancelled
    assert before["phase"] != "settled"
    assert await refusals(dealing.log) == [("manager.refused", said)]


async def test_a_manager_disabled_while_the_pause_waits_pauses_nothing(
    dealing: Studio,
) -> None:
    token = await login(dealing.http, "manager")
    state = dealing.table.svc.table_state("bj1")
    pause = dealing.http.post(
        "/console/tables/bj1/pause",
        data={"csrf_token": token, "reason": "hold the table"},
        headers=JSON,
    )
    disable = dealing.people.set_active("manager", False, by="console:admin", reason="gone")
    answer = await while_it_waits(dealing, pause, disable)
    assert answer.status_code == 403, answer.text
    said = "manager is disabled: the action was not taken"
    assert answer.json()["detail"] == said
    assert dealing.table.svc.table_state("bj1")["paused"] == state["paused"] is False
    assert await refusals(dealing.log) == [("manager.refused", said)]
