"""A settled hand shows its result on the live table page and the dealer display, with the
real ``ControllerService`` (not the double) on a real database.

Before, the ``hand`` macro read ``outcome`` from the live round state, which is the
engine's snapshot of the cards and has none: a hand lost 13 against 17 showed no result
(a doubled one only "doubled"), while the round's page, from the settlement, was right.
Now the console takes each hand's result from the round's ``round_settled`` event (a
cancelled round's ``round_cancelled``), which the pages read anyway for the timeline.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from console_helpers import context, login

from studio.config import StudioConfig, TableSettings
from studio.console import UserStore
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


class Round:
    """Table bj1 of a real service (single source, US dealing): shoe loaded, one bet, dealt."""

    def __init__(self, svc: ControllerService, clock: Clock) -> None:
        self.svc, self.clock = svc, clock
        self.seq = iter(range(1, 100))

    async def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.clock.now += timedelta(seconds=dt)
        if kind not in ("timer", "game.command"):
            data = {"ts": self.clock.now.isoformat(), **data}
        await self.svc.submit("bj1", kind, data)

    async def card(self, code: str) -> None:
        n = next(self.seq)
        data = {"device": "shoe", "seq": n, "card": code, "shoe": "S1", "serial": f"s{n}"}
        await self.feed("shoe.card", data)

    async def open(self, cards: tuple[str, ...] = ("TH", "7C", "3D", "TS")) -> None:
        census = {r: 32 for r in "A23456789TJQK"}
        shuffled = {"count": 416, "census": census}
        await self.feed(
            "shuffler.event",
            {"device": "shuf", "seq": 1, "event": "shuffle_complete", "data": shuffled},
        )
        loaded = {"device": "shoe", "seq": next(self.seq), "event": "shoe_loaded"}
        await self.feed("shoe.event", {**loaded, "data": {"shoe": "S1"}})
        await self.feed("timer", {}, dt=3)
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        await self.feed("game.command", bet)
        await self.feed("timer", {}, dt=60)  # betting closes
        # Seat 1: TH 3D (13); the dealer: 7C up, TS in the hole (17). Fewer: dealt so far.
        for code in cards:
            await self.card(code)

    async def stand(self) -> None:
        decision = {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
        await self.feed("game.command", decision)
        await self.feed("timer", {}, dt=1)


@pytest.fixture
async def dealt(
    database: Database, people: UserStore
) -> AsyncIterator[tuple[Round, httpx.AsyncClient]]:
    settings = TableSettings(id="bj1", ruleset="clubhouse", single_source=True)
    clock, fanout = Clock(), Fanout(bus=None)
    config = StudioConfig(tables=[settings])
    async with ControllerService(
        config, None, EventLog(database), fanout, clock=clock, timers=False
    ) as svc:
        table = Round(svc, clock)
        await table.open()
        app = create_app(context(database, fanout, svc))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield table, http


def seat(page: str, number: int) -> str:
    return page.split(f'data-seat="{number}">')[1].split("</li>")[0]


async def test_a_settled_hand_shows_its_result_live_and_on_the_dealer_display(
    dealt: tuple[Round, httpx.AsyncClient],
) -> None:
    table, http = dealt
    await login(http, "dealer")
    before = seat((await http.get("/console/fragments/tables/bj1")).text, 1)
    assert 'data-card="TH"' in before and "outcome" not in before  # still being played
    await table.stand()
    state = table.svc.table_state("bj1")
    assert state["phase"] == "settled", state
    assert "outcome" not in state["boxes"][0]["hands"][0]  # the live state carries none
    record = await table.svc.round_record(state["round_id"])
    (settled,) = [e for e in record["events"] if e.get("type") == "round_settled"]
    assert settled["data"]["result"]["boxes"][0]["hands"][0]["outcome"] == "lose"
    for url in ("/console/tables/bj1", "/console/fragments/tables/bj1", "/console/dealer/bj1"):
        box = seat((await http.get(url)).text, 1)
        assert 'class="hand outcome-lose"' in box, (url, box)
        assert re.search(r'<span class="outcome" title="13 loses to dealer 17">lose</span>', box)


async def test_a_cancelled_round_shows_its_hands_void(
    dealt: tuple[Round, httpx.AsyncClient],
) -> None:
    table, http = dealt
    await table.svc.cancel_round("bj1", user="manager", reason="table closing")
    await login(http, "viewer")
    box = seat((await http.get("/console/tables/bj1")).text, 1)
    assert 'class="hand outcome-void"' in box and ">void</span>" in box


async def test_a_shoe_change_asked_mid_round_says_after_which_round(
    dealt: tuple[Round, httpx.AsyncClient],
) -> None:
    # A walk-through: the table page showed "Cut card: seen" at once, and the notice did
    # not say that the change waits for the round in progress.
    _, http = dealt
    token = await login(http, "manager")
    form = {"reason": "worn cards", "csrf_token": token}
    asked = await http.post(
        "/console/tables/bj1/shoe", data=form, headers={"accept": "application/json"}
    )
    assert asked.json()["message"] == "bj1: shoe change requested: after round bj1-R1"
    page = (await http.get("/console/tables/bj1")).text
    assert '<dt>Cut card</dt><dd class="">not yet</dd>' in page
    assert 'data-field="change-requested">after this round (asked by manager)' in page
