"""A start publishes again the outputs the broker had not acknowledged when the last run
ended. Outputs are published once they and their input are committed, through the bus's
outbox (one message at a time); a controller killed between the two, or with outputs still
queued (the broker away), lost them from MQTT for good (a crash-consistency review saw 3 of
5,853 round events so lost; a code review, 15 queued and gone). Each table's mark (the
last record whose outputs the broker acknowledged) is saved every second; consumers drop
what they already have, by seq (round events) and by id and state (alerts)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import RoundEvent, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.store.stream_marks import stream_marks
from studio.streams import Channel, Emission, Fanout

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
CENSUS = {rank: 32 for rank in "A23456789TJQK"}


class Broker(Fanout):
    """Stands in for the bus: acknowledges what it is handed while ``up``; what it is handed
    while down stays unacknowledged (in the outbox when the process dies)."""

    def __init__(self) -> None:
        super().__init__(None)
        self.up = True
        self.events: list[dict[str, Any]] = []

    async def emit_many(self, table: str, emissions: Sequence[Emission]) -> None:
        for e in emissions:
            if e.channel == Channel.ROUND_EVENTS:
                self.events.append(e.payload.model_dump(mode="json"))
        if not self.up:
            emissions = [Emission(e.channel, e.payload) for e in emissions]
        await super().emit_many(table, emissions)


def _service(db: Database, fanout: Fanout) -> ControllerService:
    config = StudioConfig(tables=[TableSettings(id="t1", single_source=True)])
    return ControllerService(config, None, EventLog(db), fanout, clock=lambda: T0, timers=False)


async def _bets(service: ControllerService, *ids: str) -> None:
    for cid in ids:
        n = int(cid[1:])  # b1 on seat 1 for p1, b2 on seat 2 for p2 ...
        bet = {"id": cid, "type": "bet", "seat": n, "player": f"p{n}", "stake": "10"}
        await service.submit("t1", "game.command", bet)


async def _open(service: ControllerService) -> None:
    shuffled = {"event": "shuffle_complete", "data": {"count": 416, "census": CENSUS}}
    await service.submit(
        "t1", "shuffler.event", {"device": "shuf", "seq": 1, "ts": T0.isoformat(), **shuffled}
    )
    loaded = {"device": "shoe", "seq": 1, "ts": T0.isoformat(), "event": "shoe_loaded"}
    await service.submit("t1", "shoe.event", {**loaded, "data": {"shoe": "S1"}})
    assert service.tables["t1"].phase == "betting"


def _accepted(events: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["id"] for e in events if e["type"] == "command_accepted"]


async def test_what_the_broker_had_not_acknowledged_is_published_again(tmp_path: Path) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        await db.create_all()
        broker = Broker()
        async with _service(db, broker) as service:
            await _open(service)
            await _bets(service, "b1")
            broker.up = False  # the broker goes away: b2 and b3 stay in the outbox
            await _bets(service, "b2", "b3")
        # The next start: b2's and b3's answers again, in order; b1's not.
        broker = Broker()
        async with _service(db, broker) as again:
            assert _accepted(broker.events)[:2] == ["b2", "b3"]
            assert "b1" not in _accepted(broker.events)
            assert again.stats.republished == 2
        # Acknowledged this time: the start after that repeats nothing.
        broker = Broker()
        async with _service(db, broker) as third:
            assert _accepted(broker.events) == [] and third.stats.republished == 0


async def test_a_database_without_marks_gets_its_last_inputs_outputs_again(
    tmp_path: Path,
) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        await db.create_all()
        async with _service(db, Broker()) as service:
            await _open(service)
            await _bets(service, "b1", "b2")
        async with db.engine.begin() as conn:  # as a database from before the marks
            await conn.execute(sa.delete(stream_marks))
        broker = Broker()
        async with _service(db, broker) as again:
            assert _accepted(broker.events) == ["b2"] and again.stats.republished == 1


async def test_outputs_left_in_the_outbox_reach_a_real_broker_after_a_restart(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    # A code review's probe: 15 messages were in the outbox (the broker away) when the
    # controller stopped; the start published one of them again.
    config = StudioConfig(tables=[TableSettings(id=table_id, single_source=True)])
    away = BrokerSettings(url=f"mqtt://127.0.0.1:{free_port()}")
    # Its close gives the outbox 0.2 s (close_flush), not 5 s, to reach a broker never there.
    async with MessageBus(away, f"away-{table_id}", close_flush=0.2) as dead:
        async with ControllerService(
            config, None, EventLog(database), Fanout(dead), clock=lambda: T0, timers=False
        ) as service:
            shuffled = {"event": "shuffle_complete", "data": {"count": 416, "census": CENSUS}}
            device = {"device": "shuf", "seq": 1, "ts": T0.isoformat()}
            await service.submit(table_id, "shuffler.event", {**device, **shuffled})
            loaded = {"device": "shoe", "seq": 1, "ts": T0.isoformat(), "event": "shoe_loaded"}
            await service.submit(table_id, "shoe.event", {**loaded, "data": {"shoe": "S1"}})
            for n in (1, 2, 3):
                bet = {"id": f"b{n}", "type": "bet", "seat": n, "player": f"p{n}", "stake": "10"}
                await service.submit(table_id, "game.command", bet)
    logged = await EventLog(database).read(table_id=table_id, kinds=["out.round_event"])
    got: list[int] = []
    async with (
        MessageBus(broker, f"sub-{table_id}") as client,
        client.subscribe(Topics(table_id).round_events, RoundEvent) as subscription,
        MessageBus(broker, f"ctl-{table_id}") as bus,
    ):

        async def collect() -> None:
            async for message in subscription:
                got.append(message.payload.seq)

        async with asyncio.TaskGroup() as group:
            task = group.create_task(collect(), name="collect")
            async with ControllerService(
                config, bus, EventLog(database), Fanout(bus), clock=lambda: T0, timers=False
            ):
                async with asyncio.timeout(20):
                    while len(got) < len(logged):
                        await asyncio.sleep(0.05)
            task.cancel()
    assert got[: len(logged)] == [r.payload["seq"] for r in logged] == [1, 2, 3, 4, 5, 6]
