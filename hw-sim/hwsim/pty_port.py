"""Where a simulated device meets the driver: a pseudo-terminal, and optionally TCP.

:class:`PtyPort` opens a pty pair, puts the slave in raw mode and keeps it open
(so the master never sees a hang-up while no driver is attached and the line
discipline never echoes), and maintains a stable symlink ``link -> /dev/pts/N``.
Unplugging closes the master: an attached driver reads EIO, exactly as when a
USB serial adapter is pulled. Replugging creates a NEW pty and moves the link.

:class:`TcpPort` serves the same byte stream on a TCP port, like a ser2net
serial-over-TCP adapter in the field (``socket://host:port``).

Writes never block the simulator: bytes nobody reads pile up in the kernel,
then in a bounded buffer, then are dropped (the device's resend buffer covers
that, as on real hardware).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

_LOGGER = logging.getLogger(__name__)
PENDING_LIMIT = 256 * 1024

OnData = Callable[[bytes], None]


class PtyPort:
    def __init__(self, link: Path, on_data: OnData) -> None:
        self.link = Path(link)
        self.on_data = on_data
        self.master: int | None = None
        self.slave: int | None = None
        self.slave_name = ""
        self.dropped = 0
        self._pending = bytearray()
        self._writer_registered = False

    @property
    def is_open(self) -> bool:
        return self.master is not None

    def open(self) -> None:
        if self.master is not None:
            return
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.master, self.slave = master, slave
        self.slave_name = os.ttyname(slave)
        self.link.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.link.with_name(f".{self.link.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(self.slave_name)
        os.replace(tmp, self.link)  # atomic: the driver never sees a missing link mid-move
        asyncio.get_running_loop().add_reader(master, self._on_readable)

    def close(self) -> None:
        if self.master is None:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.master)
        if self._writer_registered:
            loop.remove_writer(self.master)
            self._writer_registered = False
        with contextlib.suppress(FileNotFoundError):
            if self.link.is_symlink() and os.readlink(self.link) == self.slave_name:
                self.link.unlink()
        os.close(self.master)
        if self.slave is not None:
            os.close(self.slave)
        self.master = self.slave = None
        self._pending.clear()

    def _on_readable(self) -> None:
        assert self.master is not None
        try:
            data = os.read(self.master, 4096)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno == errno.EIO:
                return
            raise
        if data:
            self.on_data(data)

    def write(self, data: bytes) -> None:
        if self.master is None:
            self.dropped += len(data)
            return
        self._pending += data
        self._flush()

    def _flush(self) -> None:
        if self.master is None:
            return
        while self._pending:
            try:
                n = os.write(self.master, self._pending)
            except BlockingIOError:
                break
            except OSError as exc:
                _LOGGER.debug("pty write failed: %s", exc)
                break
            del self._pending[:n]
        loop = asyncio.get_running_loop()
        if self._pending and len(self._pending) > PENDING_LIMIT:
            # Nobody has read for a long while: drop, as a device's UART FIFO would.
            self.dropped += len(self._pending)
            self._pending.clear()
        if self._pending and not self._writer_registered:
            loop.add_writer(self.master, self._flush)
            self._writer_registered = True
        elif not self._pending and self._writer_registered:
            loop.remove_writer(self.master)
            self._writer_registered = False


class TcpPort:
    """One client at a time (a new one replaces the old), as ser2net's default."""

    CLOSE_WAIT = 1.0  # how long close() waits for a dropped client's handler to end

    def __init__(self, host: str, port: int, on_data: OnData) -> None:
        self.host = host
        self.port = port
        self.on_data = on_data
        self._server: asyncio.Server | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._clients: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    @property
    def url(self) -> str:
        return f"socket://{self.host}:{self.port}"

    @property
    def is_open(self) -> bool:
        return self._server is not None

    async def open(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._client, self.host, self.port)
            self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """The adapter goes: no new clients, each client's connection is cut (abort: what
        was not sent is lost, as when the cable is pulled) and its handler ends on the
        end of its stream. Until 2026-12-06 the handlers were cancelled, and asyncio (3.11)
        logged each as an "Exception in callback ... CancelledError" with a traceback."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self._writer = None
        clients = dict(self._clients)
        for writer in clients.values():
            writer.transport.abort()
        if clients:
            _done, late = await asyncio.wait(clients, timeout=self.CLOSE_WAIT)
            for task in late:  # should not happen; the handler ends quietly all the same
                task.cancel()
        if server is not None:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._server is None:  # accepted as the adapter went
            writer.transport.abort()
            return
        if self._writer is not None:
            self._writer.close()
        self._writer = writer
        task = asyncio.current_task()
        assert task is not None
        self._clients[task] = writer
        try:
            while data := await reader.read(4096):
                self.on_data(data)
        except ConnectionError:
            pass
        except asyncio.CancelledError:
            # Cancelled (close() gave up waiting, or the event loop is shutting down): end
            # normally. asyncio's own done callback for this task asks task.exception(),
            # which on a cancelled task raises, and it logs that as an error.
            pass
        finally:
            self._clients.pop(task, None)
            if self._writer is writer:
                self._writer = None
            writer.close()

    def write(self, data: bytes) -> None:
        writer = self._writer
        if writer is not None and not writer.is_closing():
            writer.write(data)
