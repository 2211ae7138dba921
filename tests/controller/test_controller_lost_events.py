"""Device events that never arrive, even when asked for again, are not waited for in silence.

A driver that could not get a lost frame back from its device skips it (docs/devices.md),
so its published numbering has a hole that no replay fills. The controller asks for it
once a second; after ``gap_requests`` requests it records the events as lost (a logged
``device.gap`` input) and a shoe's lost event pauses the table with an ``integrity``
alert: a card may have been dealt that nobody saw. Before, the controller asked again
every second for ever and the table played on. After a restart the hole is not asked
for again.

An event the controller received but could not log (the database refused the write) was
not applied either, so it is not seen: its next delivery is taken, and until then it is a
hole asked for again like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import DeviceEvent, ReplayRequest, ShoeCard, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


async def refuse_writes(db: Database, kind: str) -> None:
    """Make the real database refuse every event-log record of ``kind`` (a trigger)."""
    async with db.engine.begin() as conn:
        if db.is_sqlite:
            await conn.execute(
                sa.text(
                    f"CREATE TRIGGER refuse BEFORE INSERT ON event_log WHEN NEW.kind = '{kind}' "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
                )
            )
            return
        await conn.execute(
            sa.text(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
            )
        )
        await conn.execute(
            sa.text(
                "CREATE TRIGGER refuse BEFORE INSERT ON event_log FOR EACH ROW "
                f"WHEN (NEW.kind = '{kind}') EXECUTE FUNCTION refuse()"
            )
        )


async def accept_writes(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(
            sa.text("DROP TRIGGER refuse" if db.is_sqlite else "DROP TRIGGER refuse ON event_log")
        )


async def test_a_shoe_event_never_resent_pauses_the_table(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    topics = Topics(table_id)
    requests: list[ReplayRequest] = []
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
    ):
        async with (
            MessageBus(broker, f"ctl-{table_id}") as bus,
            ControllerService(config, bus, EventLog(db), Fanout(bus), gap_requests=3) as service,
        ):
            async with device.subscribe(topics.replay("shoe-1"), ReplayRequest) as replays:

                async def collect() -> None:
                    async for received in replays:
                        requests.append(received.payload)

                async with asyncio.TaskGroup() as group:
                    collector = group.create_task(collect(), name="replays")
                    await device.wait_connected()
                    await asyncio.sleep(0.5)  # the controller's subscriptions are in place
                    for seq in (1, 3):  # 2 is lost on the line and never re-sent
                        event = DeviceEvent(
                            device="shoe-1", seq=seq, ts=datetime.now(UTC), event="door_closed"
                        )
                        await device.publish(topics.shoe_events, event)
                    table = service.tables[table_id]
                    async with asyncio.timeout(20):
                        while not table.alerts.open_alerts():
                            await asyncio.sleep(0.1)
                    collector.cancel()
            alert = table.alerts.open_alerts()[0]
            assert alert.code.value == "integrity" and "event 2 never arrived" in alert.message
            assert table.paused
            assert {r.from_seq for r in requests} == {2} and len(requests) == 2
            gaps = await EventLog(db).read(table_id=table_id, kinds=["device.gap"])
            assert [g.payload["seqs"] for g in gaps] == [[2]]
        # A restart rebuilds the table, alert included, and does not ask for 2 again.
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as bus,
            ControllerService(config, bus, EventLog(db), Fanout(bus), gap_requests=3) as service,
        ):
            assert service.tables[table_id].paused
            await asyncio.sleep(4)  # longer than three requests would take
            gaps = await EventLog(db).read(table_id=table_id, kinds=["device.gap"])
            assert len(gaps) == 1
            assert service.stats.gaps_requested == 0


async def test_a_card_whose_log_write_failed_is_asked_for_again_and_applied(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    """Before, the card's (device, seq) was marked seen before its write failed: the
    table was rebuilt without it, its re-delivery was dropped as a duplicate and no gap
    was reported, so the card was lost for good."""
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    topics = Topics(table_id)
    card = ShoeCard(device="shoe-1", seq=1, ts=datetime.now(UTC), card="AS", shoe="S1")
    async with (
        MessageBus(broker, f"dev-{table_id}") as device,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        ControllerService(config, bus, EventLog(database), Fanout(bus)) as service,
        device.subscribe(topics.replay("shoe-1"), ReplayRequest) as replays,
    ):
        await device.wait_connected()
        await asyncio.sleep(0.5)  # the controller's subscriptions are in place
        await refuse_writes(database, "shoe.card")
        await device.publish(topics.shoe_cards, card)
        tracker = service._trackers[table_id]
        await until(lambda: tracker.missing("shoe-1") == [1])  # refused, and so missing
        assert not service.tables[table_id].shoe.cards_dealt
        await accept_writes(database)
        async with asyncio.timeout(20):
            request = await replays.get()  # the controller asks for it again
        assert request.payload.from_seq == 1
        await device.publish(topics.shoe_cards, card)  # the driver's replay
        await until(lambda: tracker.last_contiguous("shoe-1") == 1)
        logged = await EventLog(database).read(table_id=table_id, kinds=["shoe.card"])
        assert [r.payload["seq"] for r in logged] == [1]
        assert service.stats.duplicates == 0
