"""Opening a device port and reading/writing it without blocking the event loop.

* A device path (``/dev/ttyUSB0``, a pty, or a symlink to one) is opened with
  pyserial, which sets raw mode and the baud rate. Modem-control lines are left
  alone (``rtscts=False, dsrdtr=False``; pyserial ignores the EINVAL/ENOTTY a pty
  answers). The fd is then made non-blocking and read with ``loop.add_reader``.
* ``socket://host:port`` (ser2net and other serial-over-TCP adapters) is opened
  with asyncio streams.

Why ``add_reader`` rather than a reader thread per port: one driver process
serves many devices, and a readiness callback costs nothing while a port is
idle, needs no locking, and makes "the device vanished" a plain ``OSError``
(EIO from a pty whose master closed, or a zero-length read) raised in the
driver's own task. pyserial's blocking ``read`` is never called on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from abc import ABC, abstractmethod
from urllib.parse import urlsplit

import serial

from studio.errors import DeviceError

READ_SIZE = 65536


class Transport(ABC):
    """A byte stream to one device. ``read`` returns at least one byte or raises DeviceError."""

    name: str

    @abstractmethod
    async def read(self) -> bytes: ...

    @abstractmethod
    async def write(self, data: bytes) -> None: ...

    @abstractmethod
    async def close(self) -> None: ...


class SerialTransport(Transport):
    def __init__(self, port: serial.Serial, name: str) -> None:
        self._port = port
        self.name = name
        self._fd: int = port.fileno()
        # pyserial leaves VMIN=0, with which a read of an idle tty returns b"" -- the same
        # as end-of-file. VMIN=1 on a non-blocking fd makes "no data" EAGAIN instead, so
        # b"" (or EIO) means the device really went away.
        try:
            attrs = termios.tcgetattr(self._fd)
            attrs[6][termios.VMIN] = 1
            attrs[6][termios.VTIME] = 0
            termios.tcsetattr(self._fd, termios.TCSANOW, attrs)
            os.set_blocking(self._fd, False)
        except (termios.error, OSError) as exc:
            # Unplugged since pyserial opened it (EIO from a hung-up tty): retried like any
            # unplug. termios.error is no OSError, and escaping run_forever's retry it ended
            # the driver and, through the task group, every driver of the process.
            with contextlib.suppress(Exception):
                port.close()
            raise DeviceError(f"{name}: cannot set up the port ({exc})") from exc
        self._loop = asyncio.get_running_loop()
        self._closed = False
        # One frame at a time: a write that fills the tty's buffer awaits writability, and a
        # second writer (the session's HELLO/RESEND beside a command) wrote into the gap, so
        # the device read two frames spliced into garbage (a review).
        self._write_lock = asyncio.Lock()

    async def read(self) -> bytes:
        while True:
            if self._closed:
                raise DeviceError(f"{self.name}: port closed")
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                await self._ready(self._loop.add_reader, self._loop.remove_reader)
                continue
            except OSError as exc:
                raise DeviceError(f"{self.name}: read failed ({exc.strerror or exc})") from exc
            if not data:
                raise DeviceError(f"{self.name}: device disconnected")
            return data

    async def _ready(self, add: object, remove: object) -> None:
        future: asyncio.Future[None] = self._loop.create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        add(self._fd, wake)  # type: ignore[operator]
        try:
            await future
        finally:
            remove(self._fd)  # type: ignore[operator]

    async def write(self, data: bytes) -> None:
        async with self._write_lock:
            await self._write_all(memoryview(data))

    async def _write_all(self, view: memoryview) -> None:
        while view:
            if self._closed:
                raise DeviceError(f"{self.name}: port closed")
            try:
                n = os.write(self._fd, view)
            except BlockingIOError:
                await self._ready(self._loop.add_writer, self._loop.remove_writer)
                continue
            except OSError as exc:
                raise DeviceError(f"{self.name}: write failed ({exc.strerror or exc})") from exc
            view = view[n:]

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self._port.close()


class SocketTransport(Transport):
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.name = name

    async def read(self) -> bytes:
        try:
            data = await self._reader.read(READ_SIZE)
        except OSError as exc:
            raise DeviceError(f"{self.name}: connection lost ({exc})") from exc
        if not data:
            raise DeviceError(f"{self.name}: connection closed by the adapter")
        return data

    async def write(self, data: bytes) -> None:
        try:
            self._writer.write(data)
            await self._writer.drain()
        except OSError as exc:
            raise DeviceError(f"{self.name}: write failed ({exc})") from exc

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1):
                await self._writer.wait_closed()


async def open_transport(
    port: str, baudrate: int = 115200, *, connect_within: float = 5.0
) -> Transport:
    """Open ``port`` (device path or ``socket://host:port``); raise DeviceError if it is not there."""
    if not port:
        raise DeviceError("no port configured")
    if port.startswith("socket://"):
        parts = urlsplit(port)
        if not parts.hostname or parts.port is None:
            raise DeviceError(f"bad socket URL {port!r}: expected socket://host:port")
        try:
            async with asyncio.timeout(connect_within):
                reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        except (OSError, TimeoutError) as exc:
            raise DeviceError(f"{port}: cannot connect ({exc})") from exc
        return SocketTransport(reader, writer, port)
    if "://" in port:
        raise DeviceError(f"unsupported port URL {port!r}: use a device path or socket://host:port")
    try:
        # Opening a tty is quick but still a syscall sequence (open, tcsetattr, flush):
        # keep it off the loop.
        handle = await asyncio.to_thread(
            serial.Serial,
            port,
            baudrate,
            timeout=0,
            rtscts=False,
            dsrdtr=False,
            xonxoff=False,
            exclusive=True,
        )
    except (serial.SerialException, OSError, ValueError) as exc:
        raise DeviceError(f"{port}: cannot open ({exc})") from exc
    return SerialTransport(handle, port)
