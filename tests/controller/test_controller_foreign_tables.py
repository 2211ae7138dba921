"""Messages of tables this controller does not run are none of its business.

The controller listened to every table's topics and filtered by table only after
decoding, so a malformed message of another table (another controller's, or a test's
cleared retained topic on a shared broker) was counted and logged as a malformed
payload of ours. Our own tables' malformed messages still are.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import Availability, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


async def test_another_table_s_malformed_message_is_not_an_error_of_ours(
    broker: BrokerSettings, tmp_path: Path, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    ours, theirs = Topics(table_id), Topics(f"{table_id}-other")
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    caplog.set_level(logging.WARNING)
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        ControllerService(config, bus, EventLog(db), Fanout(bus), timers=False) as service,
    ):
        await device.wait_connected()
        async with asyncio.timeout(20):
            # Each round: the other table's messages first, on the same kind of topic as
            # ours. Repeated until ours has arrived twice (the controller subscribes in the
            # background), so a controller that takes theirs has taken some by then: the
            # embedded broker does not always keep the order of a round.
            while bus.stats.malformed[ours.shoe_cards] < 2:
                await device.publish(theirs.shoe_cards, b"{not json")
                await device.publish(theirs.availability("shoe-1"), b"sideways")
                # Well-formed, for a device of the same id as ours: not ours either.
                await device.publish(
                    theirs.availability("shoe-1"), Availability(state="online").to_wire()
                )
                await device.publish(ours.shoe_cards, b"{not json")
                await asyncio.sleep(0.2)
        table = service.tables[table_id]
        foreign = [topic for topic in bus.stats.malformed if f"{table_id}-other" in topic]
        assert foreign == []
        assert table.devices["shoe-1"].availability == "unknown"
        assert service.alerts() == []
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [line for line in logged if f"{table_id}-other" in line]
    # Our own malformed card is still counted and logged, naming its topic.
    assert any(ours.shoe_cards in line and "malformed" in line for line in logged)
