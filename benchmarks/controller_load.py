"""Round-controller load: per-card validation time, card → WebSocket latency, CPU per table.

For each table count (default 1, 10 and 50) it starts that many simulated tables
(shoe, shuffler and cut-card sensor on ptys), their drivers, the controller (event
log on SQLite), the web server and one WebSocket client per table, all against
Mosquitto. Every table then deals at a real dealing pace (``--interval`` seconds
between cards, 1.0 by default): bets are placed, the initial cards are dealt one
at a time, and the round is cancelled and a new one opened.

Printed per run:
- validation: time inside the controller from receiving a card to its outputs (p50/p99),
- end to end: the simulator writing the card's frame → the WebSocket client receiving
  its ``card_dealt`` event (p50/p99),
- CPU: process CPU seconds per wall second, total and per table. Simulator, drivers,
  controller and web all run in this one process, so this is the whole stack's cost.

    .venv/bin/python benchmarks/controller_load.py [--tables 1 10 50] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

import websockets
from bench_common import TOKEN, bench_context, load_shoe_if_asked, pct

import studio.console  # noqa: F401
from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebServer, create_app


async def run(
    count: int, seconds: float, interval: float, broker: BrokerSettings
) -> dict[str, float]:
    prefix = uuid.uuid4().hex[:5]
    async with AsyncExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sims = []
        tables = []
        for i in range(count):
            sim = SimTable(f"l{prefix}-{i}", seed=i, base_dir=tmp, record_write_times=True)
            await sim.start()
            stack.push_async_callback(sim.stop)
            sims.append(sim)
            ruleset = {
                "preset": "clubhouse",
                "timeouts": {"betting_seconds": 1, "decision_seconds": 60},
            }
            tables.append(
                TableSettings(
                    id=sim.id, ruleset=ruleset, single_source=True, devices=sim.device_settings()
                )
            )
        config = StudioConfig(broker=broker, tables=tables)
        db = await stack.enter_async_context(Database(f"sqlite:///{tmp}/load.db"))
        bus = await stack.enter_async_context(MessageBus(broker, f"ctl-{prefix}"))
        log = EventLog(db)
        fanout = Fanout(bus)
        service = await stack.enter_async_context(ControllerService(config, bus, log, fanout))
        drivers = await stack.enter_async_context(DriverSet(config, broker=broker))
        await drivers.wait_online(within=120)
        web = await stack.enter_async_context(
            WebServer(create_app(bench_context(fanout, log, db, service)), port=0)
        )
        latencies: list[float] = []

        async def table_loop(sim: SimTable, deadline: float) -> None:
            table = service.tables[sim.id]
            ws = await websockets.connect(
                f"ws://127.0.0.1:{web.port}/ws/tables/{sim.id}?token={TOKEN}"
            )
            writes = sim.shoe.write_times
            assert writes is not None

            async def receive() -> None:
                async for raw in ws:
                    message = json.loads(raw)
                    data = message["data"]
                    if message["channel"] == "round_events" and data["type"] == "card_dealt":
                        written = writes.get(data["data"]["source"]["seq"])
                        if written is not None:
                            latencies.append((time.perf_counter() - written) * 1000)

            receiver = asyncio.create_task(receive(), name=f"ws:{sim.id}")
            try:
                while time.monotonic() < deadline:
                    await load_shoe_if_asked(sim, table, service.clock())
                    if table.phase == "betting" and table.engine and not table.engine.has_wagers():
                        for seat in (1, 2, 3):
                            await service.submit_command(
                                sim.id,
                                {
                                    "id": uuid.uuid4().hex,
                                    "type": "bet",
                                    "seat": seat,
                                    "player": f"p{seat}",
                                    "stake": "5",
                                },
                            )
                    elif table.phase == "dealing" and not table.paused:
                        if table.next_card() is not None:
                            sim.deal()
                        elif table.prompt().action == "wait_decisions":
                            await service.cancel_round(sim.id, user="bench", reason="benchmark")
                    await asyncio.sleep(interval)
            finally:
                receiver.cancel()
                await ws.close()

        warm = time.monotonic() + 3
        await asyncio.sleep(max(0.0, warm - time.monotonic()))
        service.stats.validation_ms.clear()
        cpu0, wall0 = time.process_time(), time.monotonic()
        deadline = wall0 + seconds
        async with asyncio.TaskGroup() as group:
            for sim in sims:
                group.create_task(table_loop(sim, deadline), name=f"table:{sim.id}")
        cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0)
        validation = list(service.stats.validation_ms)
    return {
        "tables": count,
        "cards": len(latencies),
        "validation_p50": pct(validation, 0.5),
        "validation_p99": pct(validation, 0.99),
        "e2e_p50": pct(latencies, 0.5),
        "e2e_p99": pct(latencies, 0.99),
        "cpu": cpu,
        "cpu_per_table": cpu / count,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between a table's cards"
    )
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883")
    args = parser.parse_args()
    broker = BrokerSettings(url=args.broker, client_id_prefix=f"b{uuid.uuid4().hex[:6]}")
    print(
        f"broker {args.broker}; one card per table every {args.interval}s; {args.seconds}s per run"
    )
    print("tables  cards  validation p50/p99 ms   card→WebSocket p50/p99 ms   CPU total  per table")
    for count in args.tables:
        r = await run(count, args.seconds, args.interval, broker)
        print(
            f"{r['tables']:>6} {r['cards']:>6}  {r['validation_p50']:8.2f} {r['validation_p99']:8.2f}"
            f"      {r['e2e_p50']:9.2f} {r['e2e_p99']:9.2f}        {r['cpu']:6.1%}  {r['cpu_per_table']:6.2%}"
        )


if __name__ == "__main__":
    asyncio.run(main())
