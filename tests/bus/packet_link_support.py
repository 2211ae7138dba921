"""A TCP hop to the real broker that records the MQTT packets a client sends through it
(the control packet type of each), to check what the bus put on the wire."""

from __future__ import annotations

import asyncio
import contextlib

from studio.config import BrokerSettings

# MQTT control packet types (the high 4 bits of a packet's first byte).
SUBSCRIBE = 8
UNSUBSCRIBE = 10
DISCONNECT = 14


def split_packets(buffer: bytearray) -> list[int]:
    """Take the whole packets off the front of ``buffer``; return their types."""
    types: list[int] = []
    while len(buffer) >= 2:
        remaining, multiplier, at = 0, 1, 1
        while True:  # the remaining length: 1 to 4 bytes, 7 bits each, low first
            if at >= len(buffer):
                return types  # its length is not all here yet
            byte = buffer[at]
            remaining += (byte & 0x7F) * multiplier
            multiplier *= 128
            at += 1
            if not byte & 0x80:
                break
        if len(buffer) < at + remaining:
            return types
        types.append(buffer[0] >> 4)
        del buffer[: at + remaining]
    return types


class PacketRecordingLink:
    """Passes one client's connections to the broker, recording the type of every packet
    the client sent (in ``sent``, in order); :meth:`wait_client_gone` waits until the
    client has closed its connection and all it sent is recorded."""

    def __init__(self, upstream: BrokerSettings) -> None:
        self.upstream = upstream
        self.sent: list[int] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._client_gone = asyncio.Event()

    @property
    def settings(self) -> BrokerSettings:
        return self.upstream.model_copy(update={"url": f"mqtt://127.0.0.1:{self.port}"})

    async def __aenter__(self) -> PacketRecordingLink:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    async def wait_client_gone(self) -> None:
        await self._client_gone.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.upstream.host, self.upstream.port)
        self._writers += [writer, up_writer]

        async def from_client() -> None:
            pending = bytearray()
            with contextlib.suppress(OSError):
                while data := await reader.read(65536):
                    pending += data
                    self.sent += split_packets(pending)
                    up_writer.write(data)
                    await up_writer.drain()
            self._client_gone.set()
            up_writer.close()

        async def to_client() -> None:
            with contextlib.suppress(OSError):
                while data := await up_reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        await asyncio.gather(from_client(), to_client())
