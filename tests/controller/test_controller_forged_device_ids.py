"""A device id the table does not know, or that is no topic segment, cannot stop the
controller, and a device reports its own health only (a pentest, 2026-12-07).

Before: an event naming device ``x y`` was logged (an ``unauthorised`` alert) and its id
tracked; the controller's next replay ask for it (a gap a second later, every start's ask
for the tails) built ``Topics(table).replay("x y")``, which raised: the controller stopped,
every table with it, and every later start stopped the same way, the event being in the
log. A health report sent on the shoe's own topic but naming the camera set the camera's
health.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import DeviceHealth, ReplayRequest, Topics
from studio.controller import ControllerService
from studio.controller.service import MAX_INPUT_BYTES
from studio.store import Database, EventLog
from studio.streams import Fanout

GAP_CHECK = 0.2


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


def config_of(broker: BrokerSettings, table_id: str) -> StudioConfig:
    return StudioConfig(
        broker=broker,
        tables=[
            TableSettings(
                id=table_id,
                devices=[{"id": "shoe-1", "kind": "shoe"}, {"id": "cam-1", "kind": "camera"}],
            )
        ],
    )


@asynccontextmanager
async def listening(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> AsyncIterator[tuple[ControllerService, MessageBus, Database]]:
    """A controller of the table, listening, and a device's bus, connected."""
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        ControllerService(config_of(broker, table_id), bus, EventLog(db), Fanout(bus)) as service,
    ):
        await device.wait_connected()
        await asyncio.wait_for(service.listening.wait(), 20)
        yield service, device, db


@asynccontextmanager
async def unbrokered(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    *,
    unknown_devices: int,
) -> AsyncIterator[ControllerService]:
    """A controller of table t1 (shoe-1) with no broker, fed by hand, taking the first
    ``unknown_devices`` ids of devices it does not have (UNKNOWN_DEVICES), its warnings
    captured."""
    import studio.controller.service as service_module

    monkeypatch.setattr(service_module, "UNKNOWN_DEVICES", unknown_devices)
    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    config = StudioConfig(
        tables=[TableSettings(id="t1", devices=[{"id": "shoe-1", "kind": "shoe"}])]
    )
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        ControllerService(config, None, EventLog(db), Fanout(bus=None), timers=False) as svc,
    ):
        yield svc


def event(device: str, seq: int) -> dict[str, object]:
    return {"device": device, "seq": seq, "ts": datetime.now(UTC).isoformat(), "event": "x"}


async def test_a_logged_event_of_a_device_id_that_is_no_segment_does_not_stop_a_start(
    broker: BrokerSettings, tmp_path: Path, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A log written before the ids were checked holds such an event: the start goes on
    (it asks the table's own devices only) and says once which id it does not ask."""
    config = config_of(broker, table_id)
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        async with (
            MessageBus(broker, f"ctl-{table_id}") as bus,
            ControllerService(config, bus, EventLog(db), Fanout(bus)) as service,
        ):
            await asyncio.wait_for(service.listening.wait(), 20)
            # As an older controller took it off the wire (no check of the id then).
            for seq in (1, 3):
                await service._device_input(table_id, "shoe.event", event("x y", seq))
            assert service.tables[table_id].alerts.open_alerts()  # unauthorised: an alert
        caplog.set_level(logging.WARNING, logger="studio.controller.service")
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as bus,
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), gap_requests=2, gap_check=GAP_CHECK
            ) as service,
        ):
            await asyncio.wait_for(service.listening.wait(), 20)
            # Past the start's asks and a few gap checks: still running.
            await asyncio.sleep(GAP_CHECK * 5)
            assert all(not task.done() for task in service._tasks), [
                t for t in service._tasks if t.done()
            ]
        said = [r.getMessage() for r in caplog.records if "not asked for again" in r.getMessage()]
        assert said == [
            f"{table_id}: events of device 'x y' are not asked for again: its id cannot be "
            "a topic segment"
        ]


async def test_an_unknown_device_is_not_asked_for_its_events_and_a_forged_id_is_dropped(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    config = config_of(broker, table_id)
    topics = Topics(table_id)
    asked: list[str] = []
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as device,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        ControllerService(
            config, bus, EventLog(db), Fanout(bus), gap_requests=2, gap_check=GAP_CHECK
        ) as service,
        device.subscribe(topics.replay("+"), ReplayRequest) as replays,
    ):

        async def collect() -> None:
            async for received in replays:
                asked.append(received.topic)

        async with asyncio.TaskGroup() as group:
            collector = group.create_task(collect(), name="replays")
            await device.wait_connected()
            await asyncio.wait_for(service.listening.wait(), 20)
            # On the wire: an id that is no segment is malformed (not an input at all);
            # shoe-9 is a segment but none of the table's devices; shoe-1 is.
            for name in ("x y", "shoe-9", "shoe-1"):
                for seq in (1, 3):
                    raw = json.dumps(event(name, seq)).encode()
                    await device.publish(topics.shoe_events, raw)
            table = service.tables[table_id]
            # shoe-1's hole is asked for; shoe-9's gap is given up unasked, like any other.
            await until(lambda: any(t == topics.replay("shoe-1") for t in asked))
            await until(lambda: service.received(table_id, "shoe-9") >= 3)
            collector.cancel()
        assert topics.replay("shoe-9") not in asked
        assert service.received(table_id, "x y") == 0  # never taken
        assert all(not task.done() for task in service._tasks)
        assert any("shoe-9" in alert.message for alert in table.alerts.open_alerts())


async def test_a_health_report_naming_another_device_than_its_topics_is_dropped(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    topics = Topics(table_id)
    async with listening(broker, tmp_path, table_id) as (service, device, _):
        table = service.tables[table_id]

        def report(named: str, status: str, seq: int) -> DeviceHealth:
            return DeviceHealth(
                device=named, seq=seq, ts=datetime.now(UTC), status=status, reason="test"
            )

        # The camera's own report is taken.
        await device.publish(topics.health("cam-1"), report("cam-1", "degraded", 1))
        await until(lambda: table.devices["cam-1"].health == "degraded")
        # The shoe's topic, naming the camera: dropped (the camera stays degraded), and the
        # shoe's own report after it is taken (the subscription goes on).
        await device.publish(topics.health("shoe-1"), report("cam-1", "ok", 2))
        await device.publish(topics.health("shoe-1"), report("shoe-1", "degraded", 3))
        await until(lambda: table.devices["shoe-1"].health == "degraded")
        assert table.devices["cam-1"].health == "degraded"


async def test_a_device_payload_past_the_input_limit_is_dropped_unlogged(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """A device's event `data` was unbounded: 10 MB events went into the never-pruned log
    twice each and out to every stream (a pentest, 2026-12-07)."""
    topics = Topics(table_id)
    async with listening(broker, tmp_path, table_id) as (service, device, db):
        bus = service.bus
        assert bus is not None
        huge = {**event("shoe-1", 1), "data": {"x": "y" * MAX_INPUT_BYTES}}
        await device.publish(topics.shoe_events, json.dumps(huge).encode())
        # The same seq again, small: taken (the large one was never an input).
        await device.publish(topics.shoe_events, json.dumps(event("shoe-1", 1)).encode())
        async with asyncio.timeout(20):
            while not (logged := await EventLog(db).read(kinds=["shoe.event"])):
                await asyncio.sleep(0.05)
        assert bus.stats.malformed[topics.shoe_events] == 1
        assert [record.payload["data"] for record in logged] == [{}]
        assert all(len(json.dumps(r.payload)) < MAX_INPUT_BYTES for r in await EventLog(db).read())


async def test_a_shoe_load_naming_no_valid_shoe_id_is_dropped_at_the_wire(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """A publisher's ``shoe_loaded`` with a 60 KB shoe id was taken: the id went into every
    state snapshot of the table (a pentest, 2026-12-07). A load's id is a card's ``shoe`` now
    (1 to 64 characters, not ``unknown``), checked as the event is taken off the wire."""
    topics = Topics(table_id)
    async with listening(broker, tmp_path, table_id) as (service, device, db):
        bus = service.bus
        assert bus is not None
        for seq, shoe in enumerate(("s" * 60_000, "unknown", 7), start=1):
            bad = {**event("shoe-1", seq), "event": "shoe_loaded", "data": {"shoe": shoe}}
            await device.publish(topics.shoe_events, json.dumps(bad).encode())
        good = {**event("shoe-1", 1), "event": "shoe_loaded", "data": {"shoe": "S-9", "decks": 8}}
        await device.publish(topics.shoe_events, json.dumps(good).encode())
        async with asyncio.timeout(20):
            while not (logged := await EventLog(db).read(kinds=["shoe.event"])):
                await asyncio.sleep(0.05)
        assert bus.stats.malformed[topics.shoe_events] == 3
        assert [record.payload["data"]["shoe"] for record in logged] == ["S-9"]


async def test_a_storm_of_alerts_is_read_with_one_pickle_and_a_few_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each open alert's resolutions were tried on a pickle of its own of the whole table:
    O(alerts) each, 5 s a read at 300 open alerts, and one viewer's badge held the tables
    132 s at 600 (a pentest, 2026-12-07). One pickle a table a read now, and the first
    TRIED_ALERTS alerts tried on copies of it; the others offer what the cheap checks leave."""
    import pickle as pickle_module

    import studio.controller.table as table_module
    from studio.controller.service import TRIED_ALERTS
    from studio.controller.table import TableController

    config = StudioConfig(
        tables=[TableSettings(id="t1", devices=[{"id": "shoe-1", "kind": "shoe"}])]
    )
    # The storm as a table of logic 27 raised it (a log of it replays so): from logic 28 the
    # first unauthorised device's open alert refuses the others' events without an alert.
    monkeypatch.setattr(table_module, "LOGIC", 27)
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        ControllerService(config, None, EventLog(db), Fanout(bus=None), timers=False) as svc,
    ):
        for n in range(3 * TRIED_ALERTS):  # a device id none of the table's: an alert each
            await svc.submit("t1", "shoe.event", event(f"x{n}", 1))
        pickles, copies = [], []
        trial_state, loads = TableController.trial_state, pickle_module.loads
        monkeypatch.setattr(
            TableController, "trial_state", lambda self: pickles.append(1) or trial_state(self)
        )
        monkeypatch.setattr(
            table_module.pickle, "loads", lambda data: copies.append(1) or loads(data)
        )
        views = svc.alerts(state="raised")
    assert len(views) == 3 * TRIED_ALERTS
    assert all(view["allowed_resolutions"] == ["accept", "cancel"] for view in views)
    assert len(pickles) == 1
    assert 0 < len(copies) <= TRIED_ALERTS * 2  # accept and cancel, for the first ones


async def test_events_of_made_up_device_ids_past_a_bound_are_dropped_at_the_wire(
    broker: BrokerSettings, tmp_path: Path, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A publisher making up device ids cost each a tracker, an identity and a not-asked
    entry for the run, and each event a log record for good (a pentest, 2026-12-07). The
    first UNKNOWN_DEVICES ids of a table a run are taken as before (the table's alert names
    them); the others' events are dropped at the wire, counted, and said in one line."""
    from studio.controller.service import UNKNOWN_DEVICES

    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    topics = Topics(table_id)
    made_up = [f"rogue-{n}" for n in range(200)]
    async with listening(broker, tmp_path, table_id) as (service, device, db):
        log = EventLog(db)

        async def logged() -> list[tuple[str, int]]:
            records = await log.read(table_id=table_id, kinds=["shoe.event"])
            return [(r.payload["device"], r.payload["seq"]) for r in records]

        await device.publish(topics.shoe_events, json.dumps(event("shoe-1", 1)).encode())
        for name in made_up:
            await device.publish(topics.shoe_events, json.dumps(event(name, 1)).encode())
        await device.publish(topics.shoe_events, json.dumps(event("shoe-1", 2)).encode())
        async with asyncio.timeout(20):  # one topic, taken in order: the storm is behind it
            while ("shoe-1", 2) not in (taken := await logged()):
                await asyncio.sleep(0.05)
        for name in made_up:  # as the gap checks and a start's tail asks do
            service._askable(table_id, name)
        table = service.tables[table_id]
        tracker, identities = service._trackers[table_id], service._identities[table_id]
        stats = service.stats
        not_asked = {d for t, d in service._not_asked if t == table_id}
    unknown = set(made_up)
    assert [d for d in taken if d[0] == "shoe-1"] == [("shoe-1", 1), ("shoe-1", 2)]
    assert service.received(table_id, "shoe-1") == 2
    assert len({d for d, _ in taken} & unknown) == UNKNOWN_DEVICES
    assert len(set(tracker.sources()) & unknown) == UNKNOWN_DEVICES
    assert len({d for _, d in identities._seen} & unknown) == UNKNOWN_DEVICES
    assert len(not_asked & unknown) <= UNKNOWN_DEVICES
    # The table refused the ones taken as before: one alert, counting the others.
    (alert,) = [a for a in table.alerts.open_alerts() if a.subject.get("unauthorised")]
    assert alert.subject["refused"]["refused"] == UNKNOWN_DEVICES - 1
    said = [r.getMessage() for r in caplog.records if "dropped at the wire" in r.getMessage()]
    later = len(made_up) - UNKNOWN_DEVICES - 1
    assert said == [
        f"{table_id}: 1 event of 1 device the table does not have dropped at the wire, "
        f"unlogged (e.g. 'rogue-{UNKNOWN_DEVICES}'; past the first {UNKNOWN_DEVICES} such "
        "devices of this run; a line a minute at most)",
        # The others, within the minute: said at the stop.
        f"{table_id}: {later} events of {later} devices the table does not have dropped at "
        f"the wire, unlogged (e.g. 'rogue-{UNKNOWN_DEVICES + 1}'; past the first "
        f"{UNKNOWN_DEVICES} such devices of this run; a line a minute at most)",
    ]
    assert not [r for r in caplog.records if "not asked for again" in r.getMessage()][
        UNKNOWN_DEVICES:
    ]
    assert stats.unknown_device_events == len(made_up) - UNKNOWN_DEVICES


async def test_the_events_dropped_meanwhile_are_counted_in_the_next_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import studio.controller.service as service_module

    monkeypatch.setattr(service_module, "UNKNOWN_DROPS_LOG_SECONDS", 0.05)
    async with unbrokered(tmp_path, monkeypatch, caplog, unknown_devices=1) as svc:
        assert svc._admitted("t1", "shoe-1") and svc._admitted("t1", "x0")
        assert [svc._admitted("t1", f"x{n % 3 + 1}") for n in range(5)] == [False] * 5
        assert svc._admitted("t1", "x0") and svc._admitted("t1", "shoe-1")

        def said() -> list[str]:
            return [r.getMessage() for r in caplog.records if "at the wire" in r.getMessage()]

        await until(lambda: len(said()) == 2)
        await asyncio.sleep(0.2)  # nothing more dropped: no line more
    assert [line.split(" the table")[0] for line in said()] == [
        "t1: 1 event of 1 device",
        "t1: 4 events of 3 devices",
    ]
    assert svc.stats.unknown_device_events == 5


async def test_the_drops_not_yet_said_are_said_at_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The line a minute's count was lost at a stop, and its timer left behind it."""
    async with unbrokered(tmp_path, monkeypatch, caplog, unknown_devices=1) as svc:
        assert svc._admitted("t1", "x0")
        assert [svc._admitted("t1", f"x{n + 1}") for n in range(3)] == [False] * 3
    said = [r.getMessage() for r in caplog.records if "at the wire" in r.getMessage()]
    assert [line.split(" the table")[0] for line in said] == [
        "t1: 1 event of 1 device",
        "t1: 2 events of 2 devices",
    ]
    assert svc._unknown_drops["t1"].timer is None


async def test_ids_that_are_no_segment_are_named_for_the_first_few_then_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A line and an entry each, for ever, until 2026-12-07: bounded as made-up ids are."""
    from studio.contract import DeviceEvent

    topic = Topics("t1").shoe_events
    async with unbrokered(tmp_path, monkeypatch, caplog, unknown_devices=2) as svc:
        for n in range(50):
            payload = DeviceEvent.model_validate(event(f"x {n}", 1))
            assert not svc._device_named_well("t1", topic, payload)
    assert len(svc._dropped_names) == 2
    assert svc.stats.unknown_device_events == 48
    said = [r.getMessage() for r in caplog.records]
    assert len([line for line in said if "a message naming device" in line]) == 2
    assert len([line for line in said if "dropped at the wire" in line]) == 2  # 1, then 47
