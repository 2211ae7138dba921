"""Device status on the table streams (channel ``devices``, docs/protocol.md).

The controller tracks each device's availability and health; a change of either is
streamed to WebSocket/SSE listeners as a ``devices`` message holding every device of
the table, and a new listener starts with the latest one. Before, the channel existed
in the fan-out but nothing was ever sent on it: a listener learnt of a device's health
only by polling REST.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import websockets

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import AlertMessage, DeviceStatus, TableDevices, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Channel, Fanout, StreamMessage
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"


def config(table_id: str, broker: BrokerSettings | None = None) -> StudioConfig:
    devices = [{"id": "shoe-1", "kind": "shoe"}, {"id": "cam-1", "kind": "camera"}]
    table = TableSettings(id=table_id, devices=devices)
    return (
        StudioConfig(tables=[table])
        if broker is None
        else StudioConfig(broker=broker, tables=[table])
    )


def health(device: str, seq: int, status: str) -> dict[str, Any]:
    return {
        "device": device,
        "seq": seq,
        "ts": datetime.now(UTC).isoformat(),
        "status": status,
        "reason": f"test says {status}",
        "counters": {},
    }


def device_messages(queue: asyncio.Queue[StreamMessage | None]) -> list[dict[str, Any]]:
    """The ``devices`` messages queued so far (the rest drained and dropped)."""
    got = []
    while not queue.empty():
        message = queue.get_nowait()
        if message is not None and message.channel is Channel.DEVICES:
            got.append(message.data)
    return got


def status(data: dict[str, Any], device: str) -> tuple[str, str, bool]:
    (entry,) = [d for d in data["devices"] if d["device"] == device]
    return entry["availability"], entry["health"], entry["awaited"]


@asynccontextmanager
async def controller(
    tmp_path: Path, table_id: str, fanout: Fanout
) -> AsyncIterator[ControllerService]:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        cfg = config(table_id)
        async with ControllerService(cfg, None, EventLog(db), fanout, timers=False) as service:
            yield service


async def test_availability_and_health_changes_are_streamed_once_each(
    tmp_path: Path, table_id: str
) -> None:
    fanout = Fanout(bus=None)
    async with controller(tmp_path, table_id, fanout) as service:
        async with fanout.listen(table_id) as listener:
            (start,) = device_messages(listener.queue)  # the snapshot a new listener gets
            await service.submit(
                table_id, "device.availability", {"device": "shoe-1", "state": "online"}
            )
            await service.submit(table_id, "device.health", health("shoe-1", 1, "ok"))
            await service.submit(table_id, "device.health", health("shoe-1", 2, "ok"))  # no change
            await service.submit(table_id, "device.health", health("shoe-1", 3, "degraded"))
            await service.submit(
                table_id, "device.availability", {"device": "cam-1", "state": "online"}
            )
            live = device_messages(listener.queue)
    assert start["table"] == table_id
    assert [(d["device"], d["kind"]) for d in start["devices"]] == [
        ("cam-1", "camera"),
        ("shoe-1", "shoe"),
    ]
    assert status(start, "shoe-1") == ("unknown", "unknown", False)
    assert [status(m, "shoe-1") for m in live] == [
        ("online", "unknown", False),
        ("online", "ok", False),
        ("online", "degraded", False),
        ("online", "degraded", False),  # the camera's change: every device, every time
    ]
    assert [status(m, "cam-1")[0] for m in live] == ["unknown", "unknown", "unknown", "online"]
    assert all(m["table"] == table_id and m["ts"].endswith("Z") for m in live)
    last_seen = [d["last_seen"] for d in live[-1]["devices"]]
    assert all(isinstance(seen, str) and seen.endswith("Z") for seen in last_seen)


async def test_a_new_listener_starts_with_the_latest_device_status(
    tmp_path: Path, table_id: str
) -> None:
    fanout = Fanout(bus=None)
    async with controller(tmp_path, table_id, fanout) as service:
        await service.submit(
            table_id, "device.availability", {"device": "shoe-1", "state": "online"}
        )
        await service.submit(table_id, "device.health", health("shoe-1", 1, "degraded"))
        async with fanout.listen(table_id) as late:
            (snapshot,) = device_messages(late.queue)
    assert status(snapshot, "shoe-1") == ("online", "degraded", False)
    # A restart: the replayed table awaits the device that was online, and says so at once.
    fanout = Fanout(bus=None)
    async with controller(tmp_path, table_id, fanout):
        async with fanout.listen(table_id) as after_restart:
            (snapshot,) = device_messages(after_restart.queue)
    assert status(snapshot, "shoe-1") == ("unknown", "degraded", True)


async def test_a_device_seen_over_mqtt_is_on_the_websocket_live(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    topics = Topics(table_id)
    fanout_bus = MessageBus(broker, f"ctl-{table_id}")
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db, fanout_bus as bus:
        fanout = Fanout(bus)
        log = EventLog(db)
        # A device's `offline` is held 0.5 s (its grace: 3 s by default) before it is taken.
        async with ControllerService(
            config(table_id, broker), bus, log, fanout, offline_grace=0.5
        ) as service:
            ctx = WebContext(fanout=fanout, log=log, db=db, controller=service)
            ctx.extras["platform_token"] = TOKEN
            async with WebServer(create_app(ctx), port=0) as server:
                url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
                async with websockets.connect(url) as ws:

                    async def next_devices() -> dict[str, Any]:
                        while True:
                            message = json.loads(await ws.recv())
                            if message["channel"] == "devices":
                                return dict(message["data"])

                    async with asyncio.timeout(20):
                        first = await next_devices()
                        # The shoe's driver connects: its bus says `online` (retained), and
                        # `offline` when it stops.
                        async with MessageBus(
                            broker, f"shoe-{table_id}", availability=topics.availability("shoe-1")
                        ) as shoe:
                            await shoe.wait_connected()
                            online = await next_devices()
                        offline = await next_devices()
    assert status(first, "shoe-1")[0] == "unknown"
    assert status(online, "shoe-1")[0] == "online"
    assert status(offline, "shoe-1")[0] == "offline"


async def test_device_status_is_not_published_on_mqtt(
    broker: BrokerSettings, table_id: str
) -> None:
    # The drivers publish availability (retained) and health on MQTT themselves; the
    # controller's view of them goes to the WebSocket and SSE streams only.
    devices = TableDevices(
        table=table_id,
        ts=datetime.now(UTC),
        devices=[
            DeviceStatus(
                device="shoe-1", kind="shoe", availability="online", health="ok", awaited=False
            )
        ],
    )
    async with MessageBus(broker, f"ctl-{table_id}") as bus:
        await bus.wait_connected()
        fanout = Fanout(bus)
        await fanout.emit(table_id, Channel.DEVICES, devices)
        await bus.flush()
        after_devices = bus.stats.published
        await fanout.emit(table_id, Channel.ALERTS, alert(table_id))
        await bus.flush()
        after_alert = bus.stats.published
    assert (after_devices, after_alert) == (0, 1)
    assert [m.channel for m in fanout.latest(table_id)] == [Channel.DEVICES]


def alert(table_id: str) -> AlertMessage:
    return AlertMessage(
        alert_id="A1",
        table=table_id,
        round_id=None,
        ts=datetime.now(UTC),
        code="integrity",
        severity="critical",
        state="raised",
        message="test",
    )
