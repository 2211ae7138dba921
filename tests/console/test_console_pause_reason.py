"""A paused table says why and by whom, with the real ``ControllerService``.

A shift manager's review (D2): the overview, the table page and the dealer display showed
only PAUSED (or "PAUSED: call manager"); the reason and the user were only in the raw
timeline, and with a person's pause and an alert's both in force a manager learnt which
held the table only from a refused resume. Now the overview and the table page say "Paused
by <user> at <time>: <reason>" and name the open alerts that pause it; the dealer display
shows a short reason.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401

from studio.errors import StoreError


def note(page: str) -> str:
    return page.split('data-field="paused-by">')[1].split("</p>")[0]


async def test_a_pause_by_a_person_and_by_an_alert_says_who_when_why_and_which(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.svc.pause("bj1", user="dealer", reason="player dispute at seat 1")
    await login(http, "manager")
    person = (
        "Paused by dealer at <time>2026-12-05 12:01:03 UTC</time>: <q>player dispute at seat 1</q>"
    )
    for url in ("/console/tables/bj1", "/console/fragments/tables/bj1", "/console/"):
        assert note((await http.get(url)).text) == person, url
    dealer = (await http.get("/console/dealer/bj1")).text
    assert '<p class="pause-reason" data-field="pause-reason">player dispute at seat 1</p>' in (
        dealer
    )

    await table.card("5C")  # drawn while paused: an alert holds it, and pauses the table too
    (alert,) = table.svc.alerts(state="open")
    held = alert["alert_id"]
    both = note((await http.get("/console/tables/bj1")).text)
    assert both.startswith(person + "; paused by open alert ")
    assert f'data-pausing-alert="{held}">{held}</a>' in both

    await table.svc.resume("bj1", user="manager", reason="dispute settled")
    alone = note((await http.get("/console/fragments/overview")).text)
    assert alone.startswith("Paused by open alert <a ") and "dealer" not in alone
    # The dealer reads what the alert is about; its id is in the title (since 2026-12-07).
    assert f'title="open alert {held}">' in (await http.get("/console/fragments/dealer/bj1")).text


async def test_a_table_not_paused_has_no_pause_note(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    _, http = dealt
    await login(http, "viewer")
    for url in ("/console/tables/bj1", "/console/"):
        assert 'data-field="paused-by"' not in (await http.get(url)).text, url


async def test_the_overview_stays_up_when_a_paused_tables_record_cannot_be_read(
    client: httpx.AsyncClient, controller: InMemoryController, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The overview reads a round record only for a paused (or settled) table: a database
    # error there leaves the note out, not the overview down. (The in-memory double.)
    await controller.start_round("bj1", {1: "p-1"})
    await controller.pause("bj1", user="dealer", reason="player dispute at seat 1")

    async def unreadable(round_id: str) -> dict[str, Any]:
        raise StoreError(f"the database did not answer reading {round_id}")

    monkeypatch.setattr(controller, "round_record", unreadable)
    await login(client, "viewer")
    page = await client.get("/console/")
    assert page.status_code == 200
    card = page.text.split('data-table-card="bj1"')[1].split("</article>")[0]
    assert "PAUSED" in card and 'data-field="paused-by"' not in card
