"""The whole path for real: simulated shoe on a pty → driver → broker → controller → log → WebSocket.

Runs against the embedded broker and Mosquitto, and against SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import websockets

import studio.console  # noqa: F401  (registers the console tables)
from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.demo.dealer import DealerBot
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "platform-token-for-tests"


@dataclass
class Stack:
    service: ControllerService
    sim: SimTable
    bus: MessageBus
    log: EventLog
    web: WebServer | None


@asynccontextmanager
async def studio_stack(
    broker: BrokerSettings, db: Database, tmp_path: Path, table_id: str, *, web: bool = False
) -> AsyncIterator[Stack]:
    async with AsyncExitStack() as stack:
        sim = SimTable(table_id, seed=3, decks=8, base_dir=tmp_path / "hwsim")
        await sim.start()
        stack.push_async_callback(sim.stop)
        ruleset = {"preset": "clubhouse", "timeouts": {"betting_seconds": 1, "decision_seconds": 1}}
        config = StudioConfig(
            broker=broker,
            tables=[
                TableSettings(
                    id=table_id, ruleset=ruleset, single_source=True, devices=sim.device_settings()
                )
            ],
        )
        bus = await stack.enter_async_context(MessageBus(broker, f"controller-{table_id}"))
        log = EventLog(db)
        fanout = Fanout(bus)
        service = await stack.enter_async_context(
            ControllerService(config, bus, log, fanout, round_gap=0.2)
        )
        drivers = await stack.enter_async_context(DriverSet(config, broker=broker))
        await drivers.wait_online()
        server = None
        if web:
            ctx = WebContext(fanout=fanout, log=log, db=db, controller=service)
            ctx.extras["platform_token"] = TOKEN
            app = create_app(ctx)
            server = await stack.enter_async_context(WebServer(app, port=0))
        yield Stack(service, sim, bus, log, server)


async def wait_for(predicate: Any, timeout: float = 30.0, table: Any = None) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.02)
    except TimeoutError:
        if table is None:
            raise
        alerts = [(a.code.value, a.message) for a in table.alerts.open_alerts()]
        raise AssertionError(f"stuck: {table.phase} {table.prompt().text} {alerts}") from None


async def test_card_travels_from_simulated_shoe_to_websocket(
    broker: BrokerSettings, database: Database, tmp_path: Path, table_id: str
) -> None:
    async with studio_stack(broker, database, tmp_path, table_id, web=True) as s:
        assert s.web is not None
        url = f"ws://127.0.0.1:{s.web.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            dealer = DealerBot(s.bus, s.sim, pace=0.05)
            async with asyncio.TaskGroup() as group:
                task = group.create_task(dealer.run(), name="dealer")
                table = s.service.tables[table_id]
                await wait_for(lambda: table.phase == "betting")
                result = await s.service.submit_command(
                    table_id,
                    {"id": "b1", "type": "bet", "seat": 2, "player": "p1", "stake": "5.00"},
                )
                assert result["accepted"]
                dealt: list[dict[str, Any]] = []
                async with asyncio.timeout(30):
                    while not dealt:
                        message = json.loads(await ws.recv())
                        if (
                            message["channel"] == "round_events"
                            and message["data"]["type"] == "card_dealt"
                        ):
                            dealt.append(message["data"])
                task.cancel()
        first = s.sim.shoe.dealt[0].code
        assert dealt[0]["data"]["card"] == first
        assert dealt[0]["data"]["target"] == {"kind": "seat", "seat": 2, "hand": 0}
        assert dealt[0]["data"]["source"]["device"] == "shoe-1"
        records = await s.log.read(table_id=table_id, kinds=["shoe.card"])
        assert records[0].payload["card"] == first
        assert (await s.log.verify()).ok


async def test_rounds_settle_over_real_devices(
    broker: BrokerSettings, database: Database, tmp_path: Path, table_id: str
) -> None:
    async with studio_stack(broker, database, tmp_path, table_id) as s:
        table = s.service.tables[table_id]
        dealer = DealerBot(s.bus, s.sim, pace=0.02)
        async with asyncio.TaskGroup() as group:
            task = group.create_task(dealer.run(), name="dealer")
            for n in range(3):
                await wait_for(
                    lambda n=n: table.phase == "betting" and table.round_no == n + 1, table=table
                )
                await s.service.submit_command(
                    table_id,
                    {"id": f"r{n}", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"},
                )
                # No decisions: the decision timer stands the hand (clubhouse default).
            await wait_for(lambda: table.round_no == 4, table=table)
            task.cancel()
        rounds = await s.service.rounds_search(table=table_id)
        settled = [r for r in rounds if r["status"] == "settled"]
        assert len(settled) >= 3
        assert all(r["players"] == ["p1"] and r["total_stake"] != "0.00" for r in settled)
        record = await s.service.round_record(settled[-1]["round_id"])
        kinds = [e.get("type") for e in record["events"]]
        assert "card_dealt" in kinds and "round_settled" in kinds and "timeout_default" in kinds
        assert (await s.log.verify()).ok
