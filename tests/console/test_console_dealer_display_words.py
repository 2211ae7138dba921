"""The dealer display says what the dealer must know, with the real ``ControllerService``.

A review of the dealer's prompts: a table paused by an alert showed "PAUSED: call manager"
and only the alert's id ("open alert majority-us-A7"), not what it is about ("deck out of
play, replace it and investigate"); and the cut card's coming out (the shoe's last round,
which seed 004's dealer announces) was not shown at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from console_helpers import context, login
from test_console_hand_results import Clock, Round, dealt  # noqa: F401

from studio.config import StudioConfig, TableSettings
from studio.console import UserStore
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app


def reason(page: str) -> str:
    return page.split('data-field="pause-reason"')[1].split("</p>")[0]


async def test_an_alerts_pause_shows_what_it_is_about_not_only_its_id(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.card("5C")  # drawn while the player decides: an alert holds it, the table pauses
    (alert,) = table.svc.alerts(state="open")
    assert table.svc.table_state("bj1")["paused"]
    await login(http, "dealer")
    for url in ("/console/dealer/bj1", "/console/fragments/dealer/bj1"):
        shown = reason((await http.get(url)).text)
        # The alert's message as a dealer may read it, cut for a screen read from afar; its id
        # stays in the title for the manager called.
        words = alert["message"] if len(alert["message"]) <= 60 else alert["message"][:57]
        assert words in shown, (url, shown)
        assert f'title="open alert {alert["alert_id"]}"' in shown


async def test_the_cut_card_out_is_shown_under_the_next_step(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await login(http, "dealer")
    assert 'data-field="prompt-notice"' not in (await http.get("/console/dealer/bj1")).text
    cut = {"device": "cut", "seq": 1, "event": "cut_card_detected", "data": {}}
    await table.feed("cutcard.event", cut)
    page = (await http.get("/console/fragments/dealer/bj1")).text
    assert (
        '<p class="prompt-notice" data-field="prompt-notice">'
        "Cut card out: last round of this shoe</p>" in page
    )
    assert "Wait for decisions (seat 1)" in page  # the step itself, as before


@pytest.fixture
async def hole_due(
    database: Database, people: UserStore
) -> AsyncIterator[tuple[Round, httpx.AsyncClient]]:
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse", single_source=True)])
    clock, fanout = Clock(), Fanout(bus=None)
    async with ControllerService(
        config, None, EventLog(database), fanout, clock=clock, timers=False
    ) as svc:
        table = Round(svc, clock)
        await table.open(cards=("TH", "7C", "3D"))  # the face-down hole card due next
        app = create_app(context(database, fanout, svc))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield table, http


@pytest.mark.parametrize("account", ["dealer", "manager", "admin"])
async def test_the_display_at_the_table_conceals_the_hole_card_whoever_logged_in(
    hole_due: tuple[Round, httpx.AsyncClient], account: str
) -> None:
    # A card drawn while paused and due as the face-down hole card: the alert holding it
    # names it to managers on their pages, but the dealer display is a screen at the table
    # (a review: opened with a manager's account, it showed "5S drawn while the round is
    # paused" in large type).
    table, http = hole_due
    await table.svc.pause("bj1", user="boss", reason="look")
    await table.card("5S")
    await table.svc.resume("bj1", user="boss", reason="go on")  # still paused by the alert
    assert table.svc.table_state("bj1")["paused"]
    await login(http, account)
    for url in ("/console/dealer/bj1", "/console/fragments/dealer/bj1"):
        shown = reason((await http.get(url)).text)
        assert "drawn while the round is paused" in shown, (url, shown)
        assert "5S" not in shown, (url, shown)
    if account != "dealer":  # the manager's own pages still name it, to resolve the alert
        assert "5S" in (await http.get("/console/tables/bj1")).text
