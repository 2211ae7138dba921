"""REST and the console offer an open alert's resolutions as the controller would take them now
(the real controller service, not the double).

A review of the manager's console: the camera's hold of a card drawn while the round was
paused kept offering ``accept`` after the shoe's read of that card (its twin) was accepted,
and the controller refused it (409 "TH was already dealt when alert ... was resolved").
"""

from __future__ import annotations

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

T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def played(
    database: Database, people: UserStore
) -> AsyncIterator[tuple[ControllerService, _Clock]]:
    clock = _Clock()
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse")])
    service = ControllerService(
        config, None, EventLog(database), Fanout(bus=None), clock=clock, timers=False
    )
    seqs: dict[str, int] = {}

    async def feed(kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        clock.now += timedelta(seconds=dt)
        await service.submit("bj1", kind, data)

    async def device(kind: str, name: str, **data: Any) -> None:
        seqs[name] = seqs.get(name, 0) + 1
        await feed(kind, {"device": name, "seq": seqs[name], "ts": clock.now.isoformat(), **data})

    async with service:
        census = {r: 32 for r in "A23456789TJQK"}
        await device(
            "shuffler.event",
            "shuf",
            event="shuffle_complete",
            data={"count": 416, "census": census},
        )
        await device("shoe.event", "shoe", event="shoe_loaded", data={"shoe": "S1"})
        await feed("timer", {})
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        await feed("game.command", bet)
        await feed("timer", {}, dt=40)
        await service.pause("bj1", user="manager", reason="supervisor check")
        await device("shoe.card", "shoe", card="TH", shoe="S1", serial=None)  # held
        await device("camera.card", "cam", card="TH", zone="seat:1", confidence=0.99)
        await feed("timer", {}, dt=3.5)  # the camera's sighting is held too
        await service.resume("bj1", user="manager", reason="check done")
        yield service, clock


async def test_a_hold_whose_twin_was_accepted_is_offered_without_accept(
    database: Database, played: tuple[ControllerService, _Clock]
) -> None:
    service, _ = played
    holds = {a["code"]: a for a in service.alerts(state="open")}
    assert set(holds) == {"unexpected_card", "misscan"}
    camera_held = holds["misscan"]["alert_id"]
    assert holds["misscan"]["allowed_resolutions"] == ["accept", "void", "cancel"]
    await service.resolve_alert(
        holds["unexpected_card"]["alert_id"], "accept", user="manager", reason="shoe read it"
    )
    app = create_app(context(database, service.fanout, service))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "manager")
        rest = await http.get("/api/alerts", params={"state": "open"})
        assert rest.status_code == 200, rest.text
        assert [(a["alert_id"], a["allowed_resolutions"]) for a in rest.json()] == [
            (camera_held, ["void", "cancel"])
        ]
        page = await http.get("/console/fragments/alerts")
        assert page.status_code == 200
    card = page.text[page.text.index(f'id="alert-{camera_held}"') :]
    card = card[: card.index("</article>")]
    assert 'value="void"' in card and 'value="cancel"' in card
    assert 'value="accept"' not in card
