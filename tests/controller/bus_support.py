"""A controller service on a real broker and database, with a client beside it that
publishes what a game platform or a device would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


@asynccontextmanager
async def controller_on_bus(
    broker: BrokerSettings, database: Database, table_id: str
) -> AsyncIterator[tuple[ControllerService, MessageBus]]:
    """``table_id`` (clubhouse, single source) under a controller; the client's bus."""
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, ruleset="clubhouse", single_source=True)],
    )
    async with (
        MessageBus(broker, f"controller-{table_id}") as bus,
        MessageBus(broker, f"client-{table_id}") as client,
        ControllerService(config, bus, EventLog(database), Fanout(bus)) as service,
    ):
        yield service, client


async def answered(service: ControllerService, table_id: str, cid: str) -> dict[str, Any]:
    """The answer to game command ``cid`` once the table has taken it."""
    async with asyncio.timeout(20):
        while (answer := await service.commands.answer(table_id, cid)) is None:
            await asyncio.sleep(0.02)
    return answer
