"""Helpers for the device tests: a recorder of everything the drivers publish for a table,
and the Rig (simulated table on real ptys + the real drivers + a real broker)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from drivers.runner import DriverSet
from hwsim.framing import HostFrame, HostReader, frame
from hwsim.pty_port import PtyPort
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


class ScriptedShoe:
    """An SDL/1 shoe on a real pty whose every frame the test decides: for what the
    simulator does not do (a reset that keeps the link up, a HELLO answer and a card in
    one write, a resend that never comes)."""

    def __init__(self, link: Path, device: str = "shoe-1") -> None:
        self.device = device
        self.seq = 0
        self.sent: dict[int, bytes] = {}  # the resend buffer
        # A firmware that stores its events (type, fields) and re-encodes each it resends
        # with its clock's time then (docs/devices.md 1.4 asks for the stored frame).
        self.restamp_resends = False
        self._stored: dict[int, tuple[str, ...]] = {}
        self._restamps = 0
        self.heartbeats = True
        self.answer_resend = True
        self.ignore_resends = 0  # the next N RESENDs never reach it (lost on the line)
        # Seconds between a RESEND's ACK (at once) and its frames (a slow flash read).
        self.resend_delay = 0.0
        # Events dealt as the next HELLO answer goes out: in the same write, after it.
        self.hello_then: list[tuple[str, ...]] = []
        # Events dealt just before the next HELLO answer, after a heartbeat that went out
        # first: in the same write, the heartbeat carrying the seq before them.
        self.beat_then_hello: list[tuple[str, ...]] = []
        # Bytes after the next HELLO answer, in the same write (frames garbled on the line):
        # the driver reads them with the answer, within the same health interval.
        self.hello_noise = b""
        self.host_frames: list[HostFrame] = []
        self.hello_fields: tuple[str, ...] = ("1", "SCRIPTED", "0.1")  # its HELLO answer's
        self.port = PtyPort(link, self._on_host)
        self._reader = HostReader()
        self._beats: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ScriptedShoe:
        self.port.open()
        self._beats = asyncio.create_task(self._beat(), name=f"scripted-hb:{self.device}")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._beats is not None:
            self._beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beats
        self.port.close()

    def frame(self, seq: int, type_: str, *fields: str) -> bytes:
        return frame(self.device, seq, int(time.time() * 1000), type_, *fields)

    def event(self, type_: str, *fields: str, send: bool = True) -> bytes:
        """The next event; ``send=False`` keeps it off the wire (lost) but in the buffer."""
        self.seq += 1
        data = self.sent[self.seq] = self.frame(self.seq, type_, *fields)
        self._stored[self.seq] = (type_, *fields)
        if send:
            self.port.write(data)
        return data

    def card(self, code: str, shoe: str = "S1", *, send: bool = True) -> bytes:
        return self.event("CARD", code, shoe, send=send)

    def restart(self) -> None:
        """A firmware reset: numbering from 1 again, the resend buffer forgotten."""
        self.seq = 0
        self.sent.clear()
        self._stored.clear()

    def _on_host(self, data: bytes) -> None:
        for host in self._reader.feed(data):
            if host is None:
                continue
            self.host_frames.append(host)
            if host.type == "HELLO":
                answer = b""
                if self.beat_then_hello:
                    answer = self.frame(self.seq, "HB", "OK")
                    for type_, *fields in self.beat_then_hello:
                        answer += self.event(type_, *fields, send=False)
                    self.beat_then_hello = []
                answer += self.frame(self.seq, "HELLO", *self.hello_fields)
                for type_, *fields in self.hello_then:
                    answer += self.event(type_, *fields, send=False)
                self.hello_then = []
                answer += self.hello_noise
                self.hello_noise = b""
                self.port.write(answer)
            elif host.type == "RESEND" and self.ignore_resends > 0:
                self.ignore_resends -= 1
            elif host.type == "RESEND" and self.answer_resend:
                self.port.write(self.frame(self.seq, "ACK", str(host.seq)))
                frames = [s for s in sorted(self.sent) if s >= int(host.fields[0])]
                if self.resend_delay:
                    loop = asyncio.get_running_loop()
                    loop.call_later(self.resend_delay, self._resend_frames, frames)
                else:
                    self._resend_frames(frames)

    def _resend_frames(self, seqs: list[int]) -> None:
        if self.port.is_open:
            for seq in seqs:
                self.port.write(self._resent(seq))

    def _resent(self, seq: int) -> bytes:
        if not self.restamp_resends:
            return self.sent[seq]
        self._restamps += 1  # (a later time than any before: never the same by chance)
        type_, *fields = self._stored[seq]
        return frame(self.device, seq, int(time.time() * 1000) + self._restamps, type_, *fields)

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT)
            if self.heartbeats:
                self.port.write(self.frame(self.seq, "HB", "OK"))


def saved_state(state_dir: Path, table_id: str, device: str = "shoe-1") -> dict[str, Any]:
    """The driver's state file in ``state_dir``."""
    data: dict[str, Any] = json.loads((state_dir / f"{table_id}__{device}.json").read_text())
    return data


def run_base(state_dir: Path, table_id: str, device: str = "shoe-1") -> int:
    """The bus seq base of a driver that started with ``state_dir`` but no state file there:
    the Unix time in ms at its first contact (its offset, bus seq = base + device seq), so
    that no seq an earlier run (whose state was lost) published is used again. Read from
    the saved state before the device restarted its numbering (which moves the offset)."""
    return unix_ms_base(int(saved_state(state_dir, table_id, device)["offset"]))


def unix_ms_base(offset: int) -> int:
    """``offset`` (a driver's, taken at its first contact without a state file), checked to
    be a Unix time in ms, not the device's count."""
    assert offset > 1_600_000_000_000, offset
    return offset


async def deal_first_three(shoe: ScriptedShoe, rec: Recorder) -> None:
    """Deal QH, 7C and AS (the shoe's seqs 1-3) and wait until the bus has them."""
    for code in ("QH", "7C", "AS"):
        shoe.card(code)
    await rec.wait(lambda: len(rec.cards) >= 3)
