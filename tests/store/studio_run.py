"""A controller run logged to a real database: the rounds an auditor then checks."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


class Run:
    """Feeds one table of a ControllerService (no broker) through ``submit``, as the bus would."""

    def __init__(self, database: Database, ruleset: str = "clubhouse") -> None:
        self.now = T0
        self.seq = {"shoe": 0, "shuf": 0}
        config = StudioConfig(
            tables=[TableSettings(id="bj-1", ruleset=ruleset, single_source=True)]
        )
        self.log = EventLog(database)
        self.service = ControllerService(
            config,
            None,
            self.log,
            Fanout(None),
            clock=lambda: self.now,
            timers=False,
            round_gap=1.0,
        )

    async def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.now += timedelta(seconds=dt)
        await self.service.submit("bj-1", kind, data)

    def _device(self, name: str) -> dict[str, Any]:
        self.seq[name] += 1
        return {"device": name, "seq": self.seq[name], "ts": self.now.isoformat()}

    async def open_shoe(self) -> None:
        census = {r: 32 for r in "A23456789TJQK"}
        event = {"event": "shuffle_complete", "data": {"count": 416, "census": census}}
        await self.feed("shuffler.event", {**self._device("shuf"), **event})
        event = {"event": "shoe_loaded", "data": {"shoe": "S1"}}
        await self.feed("shoe.event", {**self._device("shoe"), **event})
        await self.feed("timer", {})

    async def round(self, bets: dict[int, str], cards: list[str], stands: list[int]) -> None:
        """Bets, the deal, each seat in ``stands`` standing in turn, the dealer's draws."""
        for seat, player in bets.items():
            command = {"type": "bet", "seat": seat, "player": player, "stake": "10.00"}
            await self.feed("game.command", {"id": f"bet-{self.now}-{seat}", **command})
        await self.feed("timer", {}, dt=20)
        table = self.service.tables["bj-1"]
        for code in cards:
            while (
                table.engine is not None and table.phase == "dealing" and table.next_card() is None
            ):
                seat = stands.pop(0)
                command = {
                    "type": "decision",
                    "seat": seat,
                    "player": bets[seat],
                    "action": "stand",
                }
                await self.feed("game.command", {"id": f"d-{self.now}", **command})
            await self.feed("shoe.card", {**self._device("shoe"), "card": code, "shoe": "S1"})
        while stands:
            seat = stands.pop(0)
            command = {"type": "decision", "seat": seat, "player": bets[seat], "action": "stand"}
            await self.feed("game.command", {"id": f"d-{self.now}", **command})
        assert table.phase == "settled", table.prompt()
        await self.feed("timer", {}, dt=1.5)


async def two_rounds(database: Database) -> Run:
    """A shoe and two rounds played to the end: R1 with p1 and p2, R2 with p1."""
    run = Run(database)
    async with run.service:
        await run.open_shoe()
        # Seat 1 19, seat 2 18 against 7 + 5, the dealer draws a king: bust.
        await run.round({1: "p1", 2: "p2"}, ["TH", "8C", "7C", "9D", "TS", "5S", "KD"], [1, 2])
        # Seat 1 20 against 10 + 7: wins.
        await run.round({1: "p1"}, ["QH", "TC", "KS", "7D"], [1])
    return run


def two_rounds_in(tmp_path: Path) -> str:
    """The URL of a SQLite database in ``tmp_path`` that :func:`two_rounds` played into."""
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await two_rounds(db)

    asyncio.run(play())
    return url
