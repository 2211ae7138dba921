"""Device events that never arrive, even when asked for again, are not waited for in silence.

A driver that could not get a lost frame back from its device skips it (docs/devices.md),
so its published numbering has a hole that no replay fills. The controller asks for it
once a second (``gap_check``: a quarter of one here); after ``gap_requests`` requests it
records the events as lost (a logged ``device.gap`` input) and a shoe's lost event pauses
the table with an ``integrity`` alert: a card may have been dealt that nobody saw.
Before, the controller asked again every second for ever and the table played on. After
a restart the hole is not asked for again.

An event the controller received but could not log (the database refused the write) was
not applied either, so it is not seen: its next delivery is taken, and until then it is a
hole asked for again like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import DeviceEvent, ReplayRequest, ShoeCard, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

# How often the controller looks at the holes in a numbering and asks for them (a second in
# production): every wait below on requests or a give-up is counted in these.
GAP_CHECK = 0.25


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
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), gap_requests=3, gap_check=GAP_CHECK
            ) as service,
        ):
            async with device.subscribe(topics.replay("shoe-1"), ReplayRequest) as replays:

                async def collect() -> None:
                    async for received in replays:
                        requests.append(received.payload)

                async with asyncio.TaskGroup() as group:
                    collector = group.create_task(collect(), name="replays")
                    await device.wait_connected()
                    await asyncio.wait_for(service.listening.wait(), 20)
                    for seq in (1, 3):  # 2 is lost on the line and never re-sent
                        event = DeviceEvent(
                            device="shoe-1", seq=seq, ts=datetime.now(UTC), event="door_closed"
                        )
                        await device.publish(topics.shoe_events, event)
                    table = service.tables[table_id]
                    # (The second request reaches the device a moment after it was sent,
                    # one look before the give-up: both are waited for.)
                    async with asyncio.timeout(20):
                        while not table.alerts.open_alerts() or len(requests) < 2:
                            await asyncio.sleep(0.05)
                    collector.cancel()
            alert = table.alerts.open_alerts()[0]
            assert alert.code.value == "integrity" and "event 2 never arrived" in alert.message
            assert table.paused
            assert {r.from_seq for r in requests} == {2} and len(requests) == 2
            # The alert is in memory a moment before its input is logged (CI read between).
            await logged(db, table_id, 3)
            gaps = await EventLog(db).read(table_id=table_id, kinds=["device.gap"])
            assert [g.payload["seqs"] for g in gaps] == [[2]]
        # A restart rebuilds the table, alert included, and does not ask for 2 again.
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as bus,
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), gap_requests=3, gap_check=GAP_CHECK
            ) as service,
        ):
            assert service.tables[table_id].paused
            await asyncio.sleep(8 * GAP_CHECK)  # twice what three requests and a give-up take
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
        ControllerService(
            config, bus, EventLog(database), Fanout(bus), gap_check=GAP_CHECK
        ) as service,
        device.subscribe(topics.replay("shoe-1"), ReplayRequest) as replays,
    ):
        await device.wait_connected()
        await asyncio.wait_for(service.listening.wait(), 20)
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
        # The tracker sees the seq before its write lands: wait for the log to hold it.
        async with asyncio.timeout(20):
            while not (
                logged := await EventLog(database).read(table_id=table_id, kinds=["shoe.card"])
            ):
                await asyncio.sleep(0.05)
        assert [r.payload["seq"] for r in logged] == [1]
        assert service.stats.duplicates == 0


class Device:
    """A device's driver on the real broker: publishes events and answers replay requests
    from its buffer (``lost`` seqs are in the buffer but never reached the broker)."""

    def __init__(self, bus: MessageBus, table_id: str, device: str) -> None:
        self.bus, self.topics, self.device = bus, Topics(table_id), device
        self.buffer: dict[int, tuple[str, ShoeCard | DeviceEvent]] = {}
        self.answering = True

    async def send(self, topic: str, event: ShoeCard | DeviceEvent, *, lost: bool = False) -> None:
        self.buffer[event.seq] = (topic, event)
        if not lost:
            await self.bus.publish(topic, event)

    async def event(self, seq: int, *, lost: bool = False) -> None:
        now = datetime.now(UTC)
        event = DeviceEvent(device=self.device, seq=seq, ts=now, event="door_closed")
        await self.send(self.topics.shoe_events, event, lost=lost)

    async def serve_replays(self) -> None:
        async with self.bus.subscribe(self.topics.replay(self.device), ReplayRequest) as sub:
            async for received in sub:
                if not self.answering:
                    continue
                for seq in sorted(self.buffer):
                    if seq >= received.payload.from_seq:
                        await self.bus.publish(*self.buffer[seq])


def shoe_table(broker: BrokerSettings, table_id: str) -> StudioConfig:
    """A clubhouse table of a shoe and a shuffler, single source, 1 s to bet."""
    ruleset = {"preset": "clubhouse", "timeouts": {"betting_seconds": 1}}
    devices = [{"id": "shoe-1", "kind": "shoe"}, {"id": "shuf", "kind": "shuffler"}]
    return StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, single_source=True, ruleset=ruleset, devices=devices)],
    )


async def load_shoe(
    service: ControllerService, bus: MessageBus, shoe: Device, table_id: str
) -> None:
    """Once the controller listens: the shuffler's count of eight decks, then ``shoe`` loaded
    with them (S1, seq 100); the table opens its betting."""
    topics = Topics(table_id)
    await bus.wait_connected()
    await asyncio.wait_for(service.listening.wait(), 20)
    census = {rank: 32 for rank in "A23456789TJQK"}
    now = datetime.now(UTC)
    count = {"count": 416, "census": census}
    shuffled = DeviceEvent(device="shuf", seq=1, ts=now, event="shuffle_complete", data=count)
    await bus.publish(topics.shuffler_events, shuffled)
    loaded = DeviceEvent(device="shoe-1", seq=100, ts=now, event="shoe_loaded", data={"shoe": "S1"})
    await shoe.send(topics.shoe_events, loaded)
    await until(lambda: service.tables[table_id].phase == "betting")


async def logged(db: Database, table_id: str, count: int, timeout: float = 20.0) -> None:
    """Wait until the shoe's inputs logged are ``count``: an event released from the holds
    is applied, and logged, a moment later (a CI run read the log in between)."""
    async with asyncio.timeout(timeout):
        while len(await inputs_of(db, table_id)) < count:
            await asyncio.sleep(0.05)


async def inputs_of(db: Database, table_id: str) -> list[tuple[str, object]]:
    """The shoe's logged inputs in log order: (kind, seq or the lost seqs)."""
    records = await EventLog(db).read(
        table_id=table_id, kinds=["shoe.card", "shoe.event", "device.gap"]
    )
    return [(r.kind, r.payload.get("seq", r.payload.get("seqs"))) for r in records]


async def test_a_card_replayed_into_a_hole_is_dealt_in_the_shoe_s_order(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """Shoe order TH (101) to seat 1, 7C (102) to the dealer, 9D (103) to seat 1; 102 is
    lost on the way and comes back in a replay after 103. Before, each card was applied
    as it arrived: seat 1 got TH 7C and the dealer 9D."""
    config = shoe_table(broker, table_id)
    topics = Topics(table_id)
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as bus,
        MessageBus(broker, f"ctl-{table_id}") as ctl_bus,
        ControllerService(
            config, ctl_bus, EventLog(db), Fanout(ctl_bus), gap_check=GAP_CHECK
        ) as service,
        asyncio.TaskGroup() as group,
    ):
        shoe = Device(bus, table_id, "shoe-1")
        replays = group.create_task(shoe.serve_replays())
        await load_shoe(service, bus, shoe, table_id)
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        assert (await service.submit_command(table_id, bet))["accepted"]
        await until(lambda: service.tables[table_id].phase == "dealing")
        for seq, code in ((101, "TH"), (102, "7C"), (103, "9D")):
            card = ShoeCard(device="shoe-1", seq=seq, ts=datetime.now(UTC), card=code, shoe="S1")
            await shoe.send(topics.shoe_cards, card, lost=seq == 102)
        table = service.tables[table_id]  # (a failed input would have rebuilt it)
        await until(lambda: len(table.engine.snapshot()["dealer"]["cards"]) > 0)
        # A held event leaves ``held()`` before its input is applied (the log write): wait
        # for all three cards, wherever they went.
        await until(lambda: not service.held() and len(table.cards) == 3)
        replays.cancel()
        snap = table.engine.snapshot()
        assert snap["boxes"][0]["hands"][0]["cards"] == ["TH", "9D"]
        assert snap["dealer"]["cards"] == ["7C"]
        # The table takes an input before its log write ends: the last card may be in
        # memory and not yet in the log (a CI run under load read [101, 102]).
        async with asyncio.timeout(20):
            while (
                len(cards := [s for k, s in await inputs_of(db, table_id) if k == "shoe.card"]) < 3
            ):
                await asyncio.sleep(0.05)
        assert cards == [101, 102, 103]
        assert service.stats.gaps_requested >= 1 and not table.alerts.open_alerts()


@asynccontextmanager
async def one_shoe(
    broker: BrokerSettings, tmp_path: Path, table_id: str, **service_options: float
) -> AsyncIterator[tuple[Database, Device, ControllerService]]:
    """A table with one shoe on the real broker, its controller subscribed."""
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as bus,
        MessageBus(broker, f"ctl-{table_id}") as ctl_bus,
        ControllerService(
            config, ctl_bus, EventLog(db), Fanout(ctl_bus), **service_options
        ) as service,
    ):
        await bus.wait_connected()
        await asyncio.wait_for(service.listening.wait(), 20)
        yield db, Device(bus, table_id, "shoe-1"), service


async def test_a_hole_never_filled_holds_what_follows_until_it_is_given_up(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """The event after the hole goes in after the ``device.gap`` input, not before it."""
    options = {"gap_requests": 2, "gap_check": GAP_CHECK}
    async with one_shoe(broker, tmp_path, table_id, **options) as (db, shoe, service):
        for seq in (1, 3):  # 2 is lost on the line and never re-sent
            await shoe.event(seq)
        await until(lambda: service.held() == {f"{table_id}/shoe-1": [3]})
        await until(lambda: not service.held())
        await logged(db, table_id, 3)  # taken out of the holds as it is applied
        assert await inputs_of(db, table_id) == [
            ("shoe.event", 1),
            ("device.gap", [2]),
            ("shoe.event", 3),
        ]
        assert service.tables[table_id].alerts.open_alerts()[0].code.value == "integrity"


async def test_too_many_events_held_give_the_hole_up_at_once(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    options = {"gap_requests": 100, "hold_limit": 2}
    async with one_shoe(broker, tmp_path, table_id, **options) as (db, shoe, service):
        for seq in (1, 3, 4, 5):  # 2 never comes; 5 is one more than the limit
            await shoe.event(seq)
        await until(lambda: service._trackers[table_id].last_contiguous("shoe-1") == 5)
        # The held events are applied after the hole is given up, one write each.
        await until(lambda: not service.held())
        await logged(db, table_id, 5)
        assert service.stats.held_overflows == 1
        assert await inputs_of(db, table_id) == [
            ("shoe.event", 1),
            ("device.gap", [2]),
            ("shoe.event", 3),
            ("shoe.event", 4),
            ("shoe.event", 5),
        ]


async def test_events_held_when_the_controller_stops_are_asked_for_at_the_next_start(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """Only applied inputs are logged, and QoS 1 re-delivers nothing to a restarted
    controller (no persistent session; the client acknowledged on receipt): the next
    start asks each device in the log for everything after it. Before, the held and
    in-flight events waited for the device's next event to reveal the hole."""
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as bus,
        asyncio.TaskGroup() as group,
    ):
        shoe = Device(bus, table_id, "shoe-1")
        shoe.answering = False
        replays = group.create_task(shoe.serve_replays())
        async with (
            MessageBus(broker, f"ctl-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, EventLog(db), Fanout(ctl_bus)) as service,
        ):
            await bus.wait_connected()
            await asyncio.wait_for(service.listening.wait(), 20)
            await shoe.event(1)
            await shoe.event(2, lost=True)
            await shoe.event(3)
            await until(lambda: service.held() == {f"{table_id}/shoe-1": [3]})
        assert await inputs_of(db, table_id) == [("shoe.event", 1)]
        shoe.answering = True
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, EventLog(db), Fanout(ctl_bus)) as service,
        ):
            await until(lambda: service._trackers[table_id].last_contiguous("shoe-1") == 3)
            assert service.stats.tails_requested == 1
        replays.cancel()
        assert await inputs_of(db, table_id) == [
            ("shoe.event", 1),
            ("shoe.event", 2),
            ("shoe.event", 3),
        ]


async def test_a_numbering_that_jumps_is_one_alert_not_a_hole_asked_for_ever(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """A replaced shoe's driver counts on from the new device's own number (docs/devices.md),
    far past any hole a driver could re-send. Before, the hole was asked for and given up
    1,000 seqs at a time, an integrity alert every ~11 s (for ever, for a seq of 2**63, a
    fuzzing review); now the seqs between are recorded as skipped, one alert says so, the
    device's events go on, and a restart does not ask for them again."""
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, devices=[{"id": "shoe-1", "kind": "shoe"}])],
    )
    topics = Topics(table_id)
    sent = [(1, "door_closed"), (2, "door_closed"), (150_003, "misread"), (150_004, "door_open")]
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
    ):
        async with (
            MessageBus(broker, f"ctl-{table_id}") as bus,
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), gap_requests=2, gap_check=GAP_CHECK
            ) as service,
        ):
            await device.wait_connected()
            await asyncio.wait_for(service.listening.wait(), 20)
            for seq, event in sent:
                message = DeviceEvent(device="shoe-1", seq=seq, ts=datetime.now(UTC), event=event)
                await device.publish(topics.shoe_events, message)
            await until(lambda: service.received(table_id, "shoe-1") == 150_004)
            await asyncio.sleep(8 * GAP_CHECK)  # twice what two requests and a give-up take
            assert service.stats.seq_jumps == 1 and service.stats.gaps_requested == 0
            alerts = [(a.code.value, a.message) for a in service.tables[table_id].alerts.all()]
            assert [code for code, _ in alerts] == ["integrity", "misscan"]
            assert alerts[0][1].startswith(
                "shoe shoe-1: its numbering jumped from 2 to 150003; the 150000 events between"
            )
            gaps = await EventLog(db).read(table_id=table_id, kinds=["device.gap"])
            assert [g.payload["skipped"] for g in gaps] == [[3, 150_002]]
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as bus,
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), gap_requests=2, gap_check=GAP_CHECK
            ) as service,
        ):
            assert service.received(table_id, "shoe-1") == 150_004
            await asyncio.sleep(8 * GAP_CHECK)
            assert service.stats.gaps_requested == 0
            assert len(await EventLog(db).read(table_id=table_id, kinds=["device.gap"])) == 1
