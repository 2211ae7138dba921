"""A cancel sent for a round that has ended cancels nothing, with the real ``ControllerService``.

A review: a manager opened the table page during round N and filled the cancel form; round
N ended and N+1 began; the form, which named no round, cancelled N+1 (every wager voided),
and the confirmation dialog said "the current round". Now the console's form carries the
round it was drawn for and its dialog names it; the REST ``cancel-round`` takes an optional
``round_id``. When the round named is not the one in play (or none is): 409, nothing
cancelled, nothing logged. The check is made under the table's lock, with the cancel.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from console_helpers import login
from served_table import served_table
from test_console_hand_results import Round

from studio.console import UserStore
from studio.controller.commands import RoundNotInPlay
from studio.store import Database, EventLog

JSON = {"accept": "application/json"}


@pytest.fixture
async def dealt(
    database: Database, people: UserStore
) -> AsyncIterator[tuple[Round, httpx.AsyncClient, EventLog]]:
    async with served_table(database, Round.open) as served:
        yield served


async def next_round(table: Round) -> None:
    """Round bj1-R1 settles and bj1-R2 opens for bets."""
    await table.stand()
    await table.feed("timer", {}, dt=30)
    state = table.svc.table_state("bj1")
    assert (state["phase"], state["round_id"]) == ("betting", "bj1-R2"), state


async def logged(log: EventLog) -> int:
    return len(await log.read(table_id="bj1"))


async def test_a_form_drawn_during_a_round_does_not_cancel_the_next(
    dealt: tuple[Round, httpx.AsyncClient, EventLog],
) -> None:
    table, http, log = dealt
    token = await login(http, "manager")
    page = (await http.get("/console/tables/bj1")).text
    form = page.split('action="/console/tables/bj1/cancel"')[1].split("</form>")[0]
    # The page names the round it was drawn for: in the form and in the dialog.
    assert '<input type="hidden" name="round_id" value="bj1-R1">' in form
    assert re.search(r'data-confirm="Cancel round bj1-R1 on bj1\?', page)
    assert "the current round" not in page

    await next_round(table)
    before = await logged(log)
    sent = {"csrf_token": token, "reason": "cancel round R1", "confirm": "yes"}
    stale = await http.post("/console/tables/bj1/cancel", data={**sent, "round_id": "bj1-R1"})
    assert stale.status_code == 303
    location = stale.headers["location"]
    assert location.startswith("/console/tables/bj1?error=")
    shown = (await http.get(location)).text
    assert "round bj1-R1 is not in play on bj1 (round bj1-R2 is in play)" in shown
    state = table.svc.table_state("bj1")
    assert (state["phase"], state["round_id"]) == ("betting", "bj1-R2")
    assert await logged(log) == before  # nothing cancelled, nothing logged (no refusal)

    # As JSON: 409, the wrong time for it.
    answer = await http.post(
        "/console/tables/bj1/cancel", data={**sent, "round_id": "bj1-R1"}, headers=JSON
    )
    assert answer.status_code == 409 and "not in play" in answer.json()["detail"]
    # The form drawn now names bj1-R2, and cancels it.
    page = (await http.get("/console/tables/bj1")).text
    assert '<input type="hidden" name="round_id" value="bj1-R2">' in page
    done = await http.post(
        "/console/tables/bj1/cancel", data={**sent, "round_id": "bj1-R2"}, headers=JSON
    )
    assert done.status_code == 200
    # (bj1-R2 is in betting, no bet placed: nothing to refund, and the notice says so.)
    assert done.json()["message"] == "bj1: round bj1-R2 cancelled, no wagers to refund"
    assert table.svc.table_state("bj1")["phase"] == "settled"


async def test_a_page_drawn_between_rounds_offers_no_cancel(
    dealt: tuple[Round, httpx.AsyncClient, EventLog],
) -> None:
    table, http, _ = dealt
    await table.stand()  # bj1-R1 settled; bj1-R2 not yet open
    await login(http, "manager")
    page = (await http.get("/console/tables/bj1")).text
    assert 'id="cancel-round"' not in page and 'name="round_id"' not in page
    assert "No round was in play when this page was drawn" in page


async def test_rest_cancel_round_checks_the_round_it_names(
    dealt: tuple[Round, httpx.AsyncClient, EventLog],
) -> None:
    table, http, log = dealt
    token = await login(http, "manager")
    headers = {"x-csrf-token": token}
    url = "/api/tables/bj1/cancel-round"
    await next_round(table)
    before = await logged(log)
    stale = await http.post(url, json={"reason": "stale", "round_id": "bj1-R1"}, headers=headers)
    assert stale.status_code == 409, stale.text
    assert stale.json()["detail"] == (
        "round bj1-R1 is not in play on bj1 (round bj1-R2 is in play): nothing was changed"
    )
    assert await logged(log) == before
    assert table.svc.table_state("bj1")["phase"] == "betting"

    done = await http.post(url, json={"reason": "meant", "round_id": "bj1-R2"}, headers=headers)
    assert done.status_code == 200, done.text
    assert table.svc.table_state("bj1")["phase"] == "settled"
    before = await logged(log)
    # No round in play: a named round is refused, and not logged as a refusal either.
    none = await http.post(url, json={"reason": "again", "round_id": "bj1-R2"}, headers=headers)
    assert none.status_code == 409
    assert "(no round is in play)" in none.json()["detail"]
    assert await logged(log) == before
    # The field is checked as the body is: anything but text or null is a 422.
    wrong = await http.post(url, json={"reason": "bad", "round_id": 7}, headers=headers)
    assert wrong.status_code == 422


async def test_the_check_is_made_with_the_cancel_under_the_tables_lock(
    dealt: tuple[Round, httpx.AsyncClient, EventLog],
) -> None:
    # The input that ends bj1-R1 is queued on the table's lock before the cancel meant for
    # bj1-R1: the cancel is checked when its turn comes, and finds the round over.
    table, _, log = dealt
    svc = table.svc
    lock = svc._locks["bj1"]
    decision = {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
    await lock.acquire()
    try:
        ending = asyncio.ensure_future(table.feed("game.command", decision))
        await asyncio.sleep(0)
        cancel = asyncio.ensure_future(
            svc.cancel_round("bj1", user="mgr", reason="meant R1", round_id="bj1-R1")
        )
        await asyncio.sleep(0)
        state = svc.table_state("bj1")
        assert (state["phase"], state["round_id"]) == ("dealing", "bj1-R1")  # as the form saw
    finally:
        lock.release()
    await ending
    with pytest.raises(RoundNotInPlay, match=r"\(no round is in play\)"):
        await cancel
    record = await svc.round_record("bj1-R1")
    types = [e.get("type") for e in record["events"]]
    assert "round_settled" in types and "round_cancelled" not in types
    assert not await log.read(table_id="bj1", kinds=["manager.action", "manager.refused"])
