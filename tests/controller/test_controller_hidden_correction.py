"""A seat card's correction is logged with its card, whenever the camera's sighting came (logic 27).

A concurrency review: the camera's sighting of seat 1's second card came ~0.3 s after the
shoe's read, the hole card drawn before its window ended. The `card_mismatch` about the seat
card then concealed the camera's read as if it might be the hole card ("shoe read AC, camera
saw ?? in seat:1"), and the manager's correction of the seat card was logged and published
as `"to": "??"`, `"card": "??"` (its own `after.cards` named 3S). `studio replay` skipped a
correction whose `to` is `??` and replayed the seat card as the shoe read it: the round's
correct settlement (12 against a dealer bust) "differs" (exit 1). From table logic 27 a
mismatch seen in a seat zone conceals nothing (the hole card lies in the dealer's zone), and a
correction of a face-up card is logged with its card; a log written at 26 replays as it was
played, and `studio replay` takes a `??` correction of a face-up card from `after.cards`.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from logic17_support import Recorder, open_round
from typer.testing import CliRunner

from studio.cli import app
from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.controller.table import LOGIC
from studio.store import Database, EventLog
from studio.streams import Fanout


def _seat_card_seen_late(d: Recorder) -> None:
    """Seat 1's second card read AC by the shoe; the camera's sighting of it (4C) comes
    after the hole card was drawn; its window ends with the hole card face down."""
    open_round(d, 1)
    d.card("9H")
    d.camera("9H", "seat:1")
    d.card("5D")
    d.camera("5D", "dealer")
    d.card("AC")
    d.tick(0.3)
    d.camera("4C", "seat:1")
    d.card("JC")  # the hole card, face down
    d.camera("JC", "dealer")  # it waits for the turn
    d.tick(3.5)


def _corrected(d: Recorder) -> dict[str, Any]:
    [alert] = d.raised()
    d.resolve(alert["alert_id"], "correct", card="3S")
    [action] = [e["data"] for e in d.events if e["type"] == "manager_action"]
    return action


def test_a_seat_card_s_mismatch_and_correction_name_their_cards() -> None:
    d = Recorder()
    _seat_card_seen_late(d)
    [alert] = d.raised()
    assert (alert["code"], alert["message"]) == (
        "card_mismatch",
        "shoe read AC, camera saw 4C in seat:1",
    )
    action = _corrected(d)
    assert (action["corrected"], action["to"], action["card"]) == (3, "3S", "3S")
    assert action["after"]["cards"] == ["9H", "5D", "3S", "??"]
    assert d.replayed() == d.outputs


def test_the_up_card_s_correction_names_its_card_while_the_hole_card_is_down() -> None:
    # A sighting in the dealer's zone may be the hole card's face: still concealed, but the
    # up card as corrected lies face up (after.cards names it): its correction says it.
    d = Recorder()
    open_round(d, 1)
    d.card("9H")
    d.camera("9H", "seat:1")
    d.card("5D")
    d.tick(0.3)
    d.camera("6D", "dealer")  # the up card misread
    d.card("AC")
    d.camera("AC", "seat:1")
    d.card("JC")  # the hole card, face down
    d.tick(3.5)
    [alert] = d.raised()
    assert alert["message"] == "shoe read 5D, camera saw ?? in dealer"
    why = "the up card is 7C, not 6D"
    d.manager(
        verb="resolve", alert_id=alert["alert_id"], resolution="correct", card="7C", reason=why
    )
    [action] = [e["data"] for e in d.events if e["type"] == "manager_action"]
    assert (action["corrected"], action["to"], action["card"]) == (2, "7C", "7C")
    assert action["after"]["cards"] == ["9H", "7C", "AC", "??"]
    assert action["why"] == "the up card is 7C, not ??"  # the camera's read stays hidden
    assert d.replayed() == d.outputs


def test_a_logic_26_log_replays_as_it_was_played() -> None:
    d = Recorder(logic=26)
    _seat_card_seen_late(d)
    [alert] = d.raised()
    assert alert["message"] == "shoe read AC, camera saw ?? in seat:1"
    action = _corrected(d)
    assert (action["corrected"], action["to"], action["card"]) == (3, "??", "??")
    assert d.replayed() == d.outputs


T0 = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


class _Run:
    """One camera-checked table of a ControllerService logged to a database."""

    def __init__(self, db: Database) -> None:
        self.now = T0
        self.seqs: dict[str, int] = {}
        tables = [TableSettings(id="bj-1", ruleset="clubhouse", single_source=False)]
        self.service = ControllerService(
            StudioConfig(tables=tables),
            None,
            EventLog(db),
            Fanout(None),
            clock=lambda: self.now,
            timers=False,
            round_gap=1.0,
        )

    async def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.now += timedelta(seconds=dt)
        await self.service.submit("bj-1", kind, data)

    def device(self, name: str) -> dict[str, Any]:
        self.seqs[name] = self.seqs.get(name, 0) + 1
        return {"device": name, "seq": self.seqs[name], "ts": self.now.isoformat()}

    async def shoe(self, code: str, dt: float = 0.1) -> None:
        await self.feed("shoe.card", {**self.device("shoe"), "card": code, "shoe": "S1"}, dt)

    async def camera(self, code: str, zone: str, dt: float = 0.05) -> None:
        seen = {"card": code, "zone": zone, "confidence": 0.99}
        await self.feed("camera.card", {**self.device("cam"), **seen}, dt)


async def _play(db: Database) -> dict[str, Any]:
    """The review's round: seat 1 9H and AC (the camera 4C, late), the dealer 5D and JC; the
    manager corrects AC to 3S; seat 1 stands on 12; the dealer draws TS: bust."""
    run = _Run(db)
    async with run.service:
        census = {r: 32 for r in "A23456789TJQK"}
        shuffled = {"event": "shuffle_complete", "data": {"count": 416, "census": census}}
        await run.feed("shuffler.event", {**run.device("shuf"), **shuffled})
        loaded = {"event": "shoe_loaded", "data": {"shoe": "S1"}}
        await run.feed("shoe.event", {**run.device("shoe"), **loaded})
        await run.feed("timer", {})
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        await run.feed("game.command", bet)
        await run.feed("timer", {}, dt=20)
        for code, zone in (("9H", "seat:1"), ("5D", "dealer")):
            await run.shoe(code)
            await run.camera(code, zone)
        await run.shoe("AC")
        await run.camera("4C", "seat:1", dt=0.3)  # when the hole card is due
        await run.shoe("JC", dt=0.2)
        await run.camera("JC", "dealer")
        await run.feed("timer", {}, dt=3.5)
        [alert] = run.service.alerts(state="open")
        await run.service.resolve_alert(
            alert["alert_id"], "correct", user="boss", reason="the card is 3S", card="3S"
        )
        stand = {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
        await run.feed("game.command", stand)
        await run.shoe("TS")
        await run.camera("TS", "dealer")
        await run.feed("timer", {}, dt=3.5)
        record = await run.service.round_record("bj-1-R1")
    assert record is not None
    return record


@pytest.mark.parametrize("logic", [26, LOGIC])
async def test_studio_replay_confirms_the_corrected_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logic: int
) -> None:
    monkeypatch.setattr("studio.controller.table.LOGIC", logic)  # the run's, as logged
    url = f"sqlite:///{tmp_path}/studio.db"
    async with Database(url) as db:
        record = await _play(db)
    [action] = [
        e["data"]
        for e in record["events"]
        if e.get("type") == "manager_action" and e["data"].get("verb") == "resolve"
    ]
    assert action["after"]["cards"] == ["9H", "5D", "3S", "??"]
    # Logged at 26 as "??" for good; from 27 with its card.
    assert action["to"] == ("??" if logic == 26 else "3S")
    [settled] = [e["data"] for e in record["events"] if e.get("type") == "round_settled"]
    [box] = settled["result"]["boxes"]
    assert box["hands"][0]["total"] == 12
    # Off the test's event loop: the command runs its own (asyncio.run).
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["replay", "--round", "bj-1-R1", "--database", url]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["boxes"][0]["hands"][0]["total"] == 12
