"""A table started again with other settings replays its log with the settings each run had.

Found by an integrator's walk-through: the demo run without cameras, then on the same
database with them, replayed the first run's rounds with the camera cross-check on: each
round raised camera alerts anew (319 alerts on one table), under alert ids the first run had
given other alerts, and a settled round became a cancelled one. Each start now logs the
table's settings (``controller.started``'s ``table``); a replay takes them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def _service(database: Database, clock: Clock, *, cameras: bool) -> ControllerService:
    settings = TableSettings(id="bj1", ruleset="clubhouse", single_source=not cameras)
    return ControllerService(
        StudioConfig(tables=[settings]), None, EventLog(database), Fanout(bus=None), clock=clock,
        timers=False,
    )  # fmt: skip


async def _play_a_round_without_cameras(svc: ControllerService, clock: Clock) -> str:
    seq = iter(range(1, 1000))

    async def feed(kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        clock.now += timedelta(seconds=dt)
        if kind not in ("timer", "game.command"):
            data = {"ts": clock.now.isoformat(), **data}
        await svc.submit("bj1", kind, data)

    census = {r: 32 for r in "A23456789TJQK"}
    shuffled = {"count": 416, "census": census}
    await feed(
        "shuffler.event",
        {"device": "shuf", "seq": 1, "event": "shuffle_complete", "data": shuffled},
    )
    await feed(
        "shoe.event",
        {"device": "shoe", "seq": next(seq), "event": "shoe_loaded", "data": {"shoe": "S1"}},
    )
    await feed("timer", {}, dt=3)
    await feed(
        "game.command", {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    )
    await feed("timer", {}, dt=60)
    round_id = svc.tables["bj1"].round_id
    assert round_id is not None
    for code in ("TH", "7C", "9D", "TS"):  # the dealer stands on 17
        await feed("shoe.card", {"device": "shoe", "seq": next(seq), "card": code, "shoe": "S1"})
    await feed(
        "game.command",
        {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"},
    )
    await feed("timer", {}, dt=5)
    return round_id  # fmt: skip


async def test_a_table_restarted_with_cameras_replays_the_rounds_played_without(
    database: Database,
) -> None:
    clock = Clock()
    async with await _service(database, clock, cameras=False) as first:
        round_id = await _play_a_round_without_cameras(first, clock)
        settled = [r for r in await first.rounds_search() if r["round_id"] == round_id]
        assert settled[0]["status"] == "settled" and first.alerts() == []
    clock.now += timedelta(minutes=5)
    async with await _service(database, clock, cameras=True) as second:
        # Before: the replay with the cross-check on raised "camera did not see" alerts for
        # every card of the round played without a camera.
        assert second.alerts() == []
        [again] = [r for r in await second.rounds_search() if r["round_id"] == round_id]
        assert again["status"] == "settled" and again["single_source"] is True
        assert second.tables["bj1"].settings.single_source is False  # from this start on
    starts = await EventLog(database).read(kinds=["controller.started"])
    assert [r.payload["table"]["single_source"] for r in starts] == [True, False]
