"""Helpers for the device tests: a recorder of everything the drivers publish for a table,
and the Rig (simulated table on real ptys + the real drivers + a real broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from drivers.runner import DriverSet
from hwsim.table import SimTable, Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Availability, DeviceEvent, DeviceHealth, ShoeCard, Topics

HEARTBEAT = 0.1
TIMEOUT = 1.5  # heartbeat timeout of the drivers under test


@dataclass
class Recorder:
    """Everything published on the table's device topics, in arrival order."""

    topics: Topics
    messages: list[tuple[str, BaseModel]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()

    def on(self, topic: str) -> list[Any]:
        return [m for t, m in self.messages if t == topic]

    @property
    def cards(self) -> list[ShoeCard]:
        return self.on(self.topics.shoe_cards)

    def events(self, topic: str, name: str | None = None) -> list[DeviceEvent]:
        return [m for m in self.on(topic) if name is None or m.event == name]

    def health(self, device: str) -> list[DeviceHealth]:
        return self.on(self.topics.health(device))

    def availability(self, device: str) -> list[str]:
        return [m.state for m in self.on(self.topics.availability(device))]

    async def wait(self, predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
        async with asyncio.timeout(timeout):
            while not (result := predicate()):
                self.changed.clear()
                await self.changed.wait()
        return result


@dataclass
class Rig:
    table: SimTable
    sim: Simulator
    drivers: DriverSet
    rec: Recorder
    topics: Topics
    consumer: MessageBus
    broker: BrokerSettings


async def _record(bus: MessageBus, rec: Recorder, topic: str, model: type[BaseModel]) -> None:
    async with bus.subscribe(topic, model) as sub:
        async for received in sub:
            rec.messages.append((received.topic, received.payload))
            rec.changed.set()


async def start_recorder(bus: MessageBus, topics: Topics, group: asyncio.TaskGroup) -> Recorder:
    rec = Recorder(topics)
    subs: list[tuple[str, type[BaseModel]]] = [
        (topics.shoe_cards, ShoeCard),
        (topics.shoe_events, DeviceEvent),
        (topics.shuffler_events, DeviceEvent),
        (topics.cutcard_events, DeviceEvent),
        (topics.health("+"), DeviceHealth),
        (topics.availability("+"), Availability),
    ]
    for topic, model in subs:
        rec.tasks.append(group.create_task(_record(bus, rec, topic, model)))
    await bus.wait_connected()
    while len(bus._subs) < len(subs):  # every subscription registered before the drivers start
        await asyncio.sleep(0.01)
    return rec
