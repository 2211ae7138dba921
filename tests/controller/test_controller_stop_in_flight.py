"""A stop waits for the inputs under way: each is logged before the service returns.

``submit`` shields applying and logging an input from its caller's cancellation; before,
``quiesce()`` and the service's exit cancelled the consumers and returned at once, the
shielded work still running: the database then closed under it (its transaction lost at
the event loop's end; aiosqlite's thread raised 'Event loop is closed').
"""

from __future__ import annotations

import asyncio

from studio.config.models import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.store.eventlog import events
from studio.streams import Fanout


async def test_quiesce_returns_once_the_input_in_flight_is_logged(database: Database) -> None:
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse")])
    log = EventLog(database)
    holder_db = Database(database.url, schema=database.schema)
    try:
        async with ControllerService(config, None, log, Fanout(bus=None), timers=False) as svc:
            async with holder_db.engine.connect() as holder:
                # Another writer holds the log's lock: the input's append waits, in flight.
                await holder.begin()
                await holder_db.lock_writers(holder, events.name)
                command = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
                consumer = asyncio.create_task(svc.submit("bj1", "game.command", command))
                await asyncio.sleep(0.3)
                consumer.cancel()  # what quiesce does to the consumers
                stopping = asyncio.create_task(svc.quiesce())
                await asyncio.sleep(0.3)
                assert not stopping.done()  # before: returned with the append under way
                await holder.rollback()
            async with asyncio.timeout(10):
                await stopping
            logged = await log.read(table_id="bj1", kinds=["game.command"])
            assert [r.payload["id"] for r in logged] == ["b1"]
    finally:
        await holder_db.close()
