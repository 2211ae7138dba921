"""A TCP hop to the real broker that can lose the broker's answers, or be cut as if the
broker went away, and records the MQTT packets a client sends through it (tests of bus and
drivers)."""

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


class BrokerLink:
    """A TCP hop between a client and the real broker.

    ``answers_lost``: it stops passing the broker's answers: what the client publishes
    still reaches the broker (and its subscribers), but no PUBACK comes back, as when a
    link dies between a delivery and its acknowledgement. :meth:`break_link`: every
    connection through it is closed and new ones are closed at once, as if the broker
    were away. ``sent``: the type of every packet a client sent through it, in order;
    :meth:`wait_client_gone` waits until a client has closed its connection and all it
    sent is recorded."""

    def __init__(self, upstream: BrokerSettings) -> None:
        self.upstream = upstream
        self.answers_lost = False
        self.dropped_answers: list[bytes] = []  # what of the broker's answers was swallowed
        self.cut = False
        self.sent: list[int] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._client_gone = asyncio.Event()

    @property
    def settings(self) -> BrokerSettings:
        return self.upstream.model_copy(update={"url": f"mqtt://127.0.0.1:{self.port}"})

    async def __aenter__(self) -> BrokerLink:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        self._close_all()
        await self._server.wait_closed()

    async def wait_client_gone(self) -> None:
        await self._client_gone.wait()

    def break_link(self) -> None:
        self.cut = True
        self._close_all()

    def _close_all(self) -> None:
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(self.upstream.host, self.upstream.port)
        self._writers += [writer, up_writer]

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, answers: bool) -> None:
            pending = bytearray()  # the client's bytes not yet a whole packet
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await src.read(65536):
                    if self.cut:
                        break
                    if answers and self.answers_lost:
                        self.dropped_answers.append(data)
                        continue
                    if not answers:
                        pending += data
                        self.sent += split_packets(pending)
                    dst.write(data)
                    await dst.drain()
            if not answers:
                self._client_gone.set()
            dst.close()

        await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))
