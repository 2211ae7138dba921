"""A simulated SDL/1 device: seq, resend buffer, heartbeat, handshake and line faults.

Device-specific behaviour (cards, shuffles, the cut card) lives in the
subclasses; everything a serial line can do wrong lives here, so every device
can be unplugged, garbled, slowed down, silenced or given a skewed clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from hwsim.framing import HostFrame, HostReader, frame
from hwsim.pty_port import PtyPort, TcpPort
from studio.errors import DeviceError

_LOGGER = logging.getLogger(__name__)


@dataclass
class LineFaults:
    heartbeat_stopped: bool = False
    mute: bool = False  # a hung device: nothing at all is written (events stay in the buffer)
    clock_skew_ms: int = 0
    chunk_size: int = 0  # >0: frames are written in pieces of this many bytes ...
    chunk_delay: float = 0.0  # ... with this pause between pieces
    garble_next: int = 0  # corrupt the next N event frames on the wire
    reorder_next: bool = False  # swap the next two event frames on the wire


@dataclass(frozen=True, slots=True)
class Emitted:
    seq: int
    type: str
    fields: tuple[str, ...]


class SimDevice:
    kind: ClassVar[str] = "device"
    model: ClassVar[str] = "SIM"
    firmware: ClassVar[str] = "1.0.0"

    def __init__(
        self,
        device_id: str,
        link: Path | None,
        *,
        tcp_port: int | None = None,
        tcp_host: str = "127.0.0.1",
        heartbeat_interval: float = 0.5,
        versions: tuple[int, ...] = (1,),
        resend_buffer: int = 4096,
        seed: int = 0,
        record_write_times: bool = False,
        wire_id: str | None = None,
    ) -> None:
        self.device_id = device_id
        # The id its frames carry (a serial number): unique per device, so a driver that
        # learned it refuses another table's device on a renumbered port.
        self.wire_id = wire_id or device_id
        self.heartbeat_interval = heartbeat_interval
        self.versions = versions
        self.faults = LineFaults()
        self.seq = 0
        self.emitted: list[Emitted] = []
        self._buffer: deque[tuple[int, bytes]] = deque(maxlen=resend_buffer)
        self._rng = random.Random(seed)
        self._reader = HostReader()
        self.pty = PtyPort(link, self._on_host_bytes) if link is not None else None
        self.tcp = (
            TcpPort(tcp_host, tcp_port, self._on_host_bytes) if tcp_port is not None else None
        )
        self._out: asyncio.Queue[tuple[bytes, int | None]] = asyncio.Queue()
        self._held: bytes | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.host_frames: list[HostFrame] = []
        self.write_times: dict[int, float] | None = {} if record_write_times else None
        self.plugged = False

    # -- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        await self.plug()
        self._tasks = [
            asyncio.create_task(self._writer(), name=f"hwsim-writer:{self.device_id}"),
            asyncio.create_task(self._heartbeat(), name=f"hwsim-hb:{self.device_id}"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        await self.unplug()

    async def plug(self) -> None:
        if self.pty is not None:
            self.pty.open()
        if self.tcp is not None:
            await self.tcp.open()
        self.plugged = True

    async def unplug(self) -> None:
        """The cable is pulled: the pty disappears (and the TCP adapter drops its client)."""
        self.plugged = False
        if self.pty is not None:
            self.pty.close()
        if self.tcp is not None:
            await self.tcp.close()

    async def power_cycle(self) -> None:
        """Off and on again: the device restarts its numbering and forgets its resend buffer."""
        await self.unplug()
        self.seq = 0
        self._buffer.clear()
        # What was only in the device's memory goes too: a frame held back by reorder_next
        # (sent after the next event, it would pose as the new numbering's seq), frames
        # still queued for the wire, a host frame half received.
        self._held = None
        while not self._out.empty():
            self._out.get_nowait()
        self._reader = HostReader()
        await self.plug()

    @property
    def port(self) -> str:
        """What a driver should open: the stable pty link, else the TCP URL."""
        if self.pty is not None:
            return str(self.pty.link)
        assert self.tcp is not None
        return self.tcp.url

    # -- output -----------------------------------------------------------------
    def now_ms(self) -> int:
        return int(time.time() * 1000) + self.faults.clock_skew_ms

    def _frame(self, seq: int, type_: str, *fields: str) -> bytes:
        return frame(self.wire_id, seq, self.now_ms(), type_, *fields)

    def emit(self, type_: str, *fields: str) -> int:
        """An event: it takes the next seq and goes into the resend buffer.

        DeviceError, and no seq taken, for fields SDL/1 cannot carry (free text such as a
        sensor fault's detail comes from the control API and scenario files)."""
        try:
            data = self._frame(self.seq + 1, type_, *fields)
        except ValueError as exc:
            raise DeviceError(f"{self.device_id}: {exc}") from exc
        self.seq += 1
        self._buffer.append((self.seq, data))
        self.emitted.append(Emitted(self.seq, type_, tuple(fields)))
        wire = data
        if self.faults.garble_next > 0:
            self.faults.garble_next -= 1
            wire = self._garble(data)
        if self.faults.reorder_next:
            self.faults.reorder_next = False
            self._held = wire
            return self.seq
        self._send(wire, self.seq)
        if self._held is not None:
            held, self._held = self._held, None
            self._send(held, self.seq - 1)
        return self.seq

    def reply(self, type_: str, *fields: str) -> None:
        """A reply or heartbeat: carries the last event seq, not a new one."""
        self._send(self._frame(self.seq, type_, *fields), None)

    def _garble(self, data: bytes) -> bytes:
        wire = bytearray(data)
        pos = self._rng.randrange(1, len(wire) - 7)  # inside the body: the CRC must catch it
        wire[pos] = (wire[pos] + 1 + self._rng.randrange(25)) % 94 + 33 if wire[pos] != 36 else 37
        if wire[pos] in (36, 10):  # never forge a frame boundary
            wire[pos] = 35
        return bytes(wire)

    def inject_garbage(self, data: bytes | None = None, size: int = 32) -> None:
        """Line noise between frames."""
        if data is None:
            data = bytes(self._rng.choice(b"\x00\xff\x7fABC#%&\x1b0123,") for _ in range(size))
        self._send(data, None)

    def _send(self, data: bytes, seq: int | None) -> None:
        if self.faults.mute:
            return
        self._out.put_nowait((data, seq))  # one writer task keeps the wire order

    async def _writer(self) -> None:
        while True:
            data, seq = await self._out.get()
            faults = self.faults
            if faults.chunk_size > 0:
                for i in range(0, len(data), faults.chunk_size):
                    self._write(data[i : i + faults.chunk_size])
                    await asyncio.sleep(faults.chunk_delay)
            else:
                self._write(data)
            if seq is not None and self.write_times is not None:
                self.write_times[seq] = time.perf_counter()

    def _write(self, data: bytes) -> None:
        if self.pty is not None:
            self.pty.write(data)
        if self.tcp is not None:
            self.tcp.write(data)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            if not self.faults.heartbeat_stopped:
                self.reply("HB", self.status())

    def status(self) -> str:
        return "OK"

    # -- input ------------------------------------------------------------------
    def _on_host_bytes(self, data: bytes) -> None:
        for host_frame in self._reader.feed(data):
            if host_frame is None:
                self.reply("NAK", "0", "E02", "bad checksum")
                continue
            self.host_frames.append(host_frame)
            if self.faults.mute:
                continue
            self.on_host_frame(host_frame)

    def on_host_frame(self, f: HostFrame) -> None:
        ref = str(f.seq)
        if f.type == "HELLO":
            wanted = int(f.fields[0]) if f.fields and f.fields[0].isdigit() else 0
            if wanted not in self.versions:
                self.reply("NAK", ref, "E01", "protocol version not supported")
                return
            self.reply("HELLO", str(wanted), self.model, self.firmware, *self.hello_info())
        elif f.type == "RESEND":
            self._resend(ref, int(f.fields[0]) if f.fields and f.fields[0].isdigit() else 1)
        elif not self.on_command(f):
            self.reply("NAK", ref, "E03", "unknown command")

    def hello_info(self) -> list[str]:
        return []

    def on_command(self, f: HostFrame) -> bool:
        """Device-specific commands; return False for an unknown one."""
        return False

    def _resend(self, ref: str, from_seq: int) -> None:
        if from_seq > self.seq:
            self.reply("ACK", ref)
            return
        oldest = self._buffer[0][0] if self._buffer else self.seq + 1
        if from_seq < oldest:
            self.reply("NAK", ref, "E04", str(oldest))  # E04's text is the oldest buffered seq
        self.reply("ACK", ref)
        for seq, data in self._buffer:
            if seq >= from_seq:
                self._send(data, None)
