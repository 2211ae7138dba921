"""The face-down hole card through the service: log, round record and streams (real database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Channel, Fanout


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


async def test_the_round_record_hides_the_hole_card_until_the_dealer_turns_it(
    database: Database,
) -> None:
    clock, fanout, log = Clock(), Fanout(bus=None), EventLog(database)
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse", single_source=True)])
    streamed: list[dict[str, Any]] = []
    async with ControllerService(config, None, log, fanout, clock=clock, timers=False) as svc:
        seq = iter(range(1, 100))

        async def feed(kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
            clock.step(dt)
            if kind != "timer" and kind != "game.command":
                data = {"ts": clock.now.isoformat(), **data}
            for out in await svc.submit("bj1", kind, data):
                if out.channel is Channel.ROUND_EVENTS:
                    streamed.append(out.payload.model_dump(mode="json"))

        census = {r: 32 for r in "A23456789TJQK"}
        await feed(
            "shuffler.event",
            {
                "device": "shuf",
                "seq": 1,
                "event": "shuffle_complete",
                "data": {"count": 416, "census": census},
            },
        )
        await feed(
            "shoe.event",
            {"device": "shoe", "seq": next(seq), "event": "shoe_loaded", "data": {"shoe": "S1"}},
        )
        await feed("timer", {}, dt=3)
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        await feed("game.command", bet)
        await feed("timer", {}, dt=60)  # betting closes
        for code, serial in [("TH", "s1"), ("7C", "s2"), ("9D", "s3"), ("5S", "s4")]:
            await feed(
                "shoe.card",
                {"device": "shoe", "seq": next(seq), "card": code, "shoe": "S1", "serial": serial},
            )
        round_id = svc.tables["bj1"].round_id
        assert round_id is not None
        record = await svc.round_record(round_id)
        shown = str(record)
        assert "5S" not in shown and "s4" not in shown  # neither the card nor its serial
        reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
        assert [r["card"] for r in reads] == ["TH", "7C", "9D", "??"]
        assert "5S" not in str(streamed)
        # The log itself keeps the card: recovery and audit need it.
        assert "5S" in str([r.payload for r in await log.read(round_id=round_id)])

        decision = {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
        await feed("game.command", decision)
        assert [e["data"] for e in streamed if e["type"] == "hole_card_revealed"] == [
            {"card": "5S", "index": 4}
        ]
        record = await svc.round_record(round_id)
        reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
        assert reads[-1]["card"] == "5S"
