"""End-to-end latency: simulator writes a card on its pty → WebSocket client gets the round event.

Path: hwsim shoe (pty) → shoe driver → MQTT (Mosquitto) → round controller (rules
engine, cross-check off, event log on SQLite) → fan-out → WebSocket. In the same
run it measures the raw broker round trip (publish → receive on another client),
so the ratio says what the studio adds on top of the broker.

    .venv/bin/python benchmarks/e2e_latency.py [--cards 300] [--broker mqtt://127.0.0.1:1883]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import websockets
from bench_common import TOKEN, bench_context, load_shoe_if_asked, pct

import studio.console  # noqa: F401
from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import ShoeCard, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebServer, create_app


async def broker_round_trip(broker: BrokerSettings, n: int) -> list[float]:
    topic = Topics(f"bench-{uuid.uuid4().hex[:8]}").shoe_cards
    out: list[float] = []
    async with MessageBus(broker, "rt-sub") as sub_bus, MessageBus(broker, "rt-pub") as pub_bus:
        async with sub_bus.subscribe(topic, ShoeCard) as sub:
            await sub_bus.wait_connected()
            await pub_bus.wait_connected()
            for seq in range(1, n + 1):
                start = time.perf_counter()
                await pub_bus.publish(
                    topic, ShoeCard(device="d", seq=seq, ts=datetime.now(UTC), card="QH", shoe="S")
                )
                await sub.get()
                out.append((time.perf_counter() - start) * 1000)
    return out


async def end_to_end(broker: BrokerSettings, cards: int) -> list[float]:
    table_id = f"bench-{uuid.uuid4().hex[:6]}"
    async with AsyncExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sim = SimTable(table_id, seed=1, base_dir=tmp, record_write_times=True)
        await sim.start()
        stack.push_async_callback(sim.stop)
        ruleset = {
            "preset": "clubhouse",
            "timeouts": {"betting_seconds": 1, "decision_seconds": 60},
        }
        config = StudioConfig(
            broker=broker,
            tables=[
                TableSettings(
                    id=table_id, ruleset=ruleset, single_source=True, devices=sim.device_settings()
                )
            ],
        )
        db = await stack.enter_async_context(Database(f"sqlite:///{tmp}/bench.db"))
        bus = await stack.enter_async_context(MessageBus(broker, f"ctl-{table_id}"))
        log = EventLog(db)
        fanout = Fanout(bus)
        service = await stack.enter_async_context(ControllerService(config, bus, log, fanout))
        await stack.enter_async_context(DriverSet(config, broker=broker))
        web = await stack.enter_async_context(
            WebServer(create_app(bench_context(fanout, log, db, service)), port=0)
        )
        ws = await stack.enter_async_context(
            websockets.connect(f"ws://127.0.0.1:{web.port}/ws/tables/{table_id}?token={TOKEN}")
        )
        table = service.tables[table_id]
        latencies: list[float] = []
        shoe = sim.shoe
        while len(latencies) < cards:
            while table.phase != "betting":
                await load_shoe_if_asked(sim, table, service.clock())
                await asyncio.sleep(0.01)
            for seat in range(1, 8):
                await service.submit_command(
                    table_id,
                    {
                        "id": uuid.uuid4().hex,
                        "type": "bet",
                        "seat": seat,
                        "player": f"p{seat}",
                        "stake": "5",
                    },
                )
            while table.phase == "betting":
                await asyncio.sleep(0.01)
            # Deal the initial cards one at a time and time each to its WebSocket event.
            while table.next_card() is not None and len(latencies) < cards:
                before = set(shoe.write_times or {})
                sim.deal()
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    data = message["data"]
                    if message["channel"] == "round_events" and data["type"] == "card_dealt":
                        break
                received = time.perf_counter()
                seq = data["data"]["source"]["seq"]
                written = (shoe.write_times or {}).get(seq)
                if written is not None and seq not in before:
                    latencies.append((received - written) * 1000)
            if table.phase == "dealing":  # a dealer blackjack peeked ends the round itself
                await service.cancel_round(table_id, user="bench", reason="benchmark round done")
        return latencies


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883")
    args = parser.parse_args()
    broker = BrokerSettings(url=args.broker, client_id_prefix=f"b{uuid.uuid4().hex[:6]}")
    raw = await broker_round_trip(broker, args.cards)
    e2e = await end_to_end(broker, args.cards)
    print(f"broker {args.broker}, {len(e2e)} cards")
    print(f"raw broker round trip   p50 {pct(raw, 0.5):7.2f} ms   p99 {pct(raw, 0.99):7.2f} ms")
    print(f"card → WebSocket event  p50 {pct(e2e, 0.5):7.2f} ms   p99 {pct(e2e, 0.99):7.2f} ms")
    print(f"ratio (p50)             {statistics.median(e2e) / statistics.median(raw):7.1f} x")


if __name__ == "__main__":
    asyncio.run(main())
