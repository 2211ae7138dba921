"""A TCP hop to the real broker that can lose the broker's answers, or be cut as if the
broker went away (tests of bus and drivers)."""

from __future__ import annotations

import asyncio
import contextlib

from studio.config import BrokerSettings


class BrokerLink:
    """A TCP hop between a client and the real broker.

    ``answers_lost``: it stops passing the broker's answers: what the client publishes
    still reaches the broker (and its subscribers), but no PUBACK comes back, as when a
    link dies between a delivery and its acknowledgement. :meth:`break_link`: every
    connection through it is closed and new ones are closed at once, as if the broker
    were away."""

    def __init__(self, upstream: BrokerSettings) -> None:
        self.upstream = upstream
        self.answers_lost = False
        self.dropped_answers: list[bytes] = []  # what of the broker's answers was swallowed
        self.cut = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

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
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await src.read(65536):
                    if self.cut:
                        break
                    if answers and self.answers_lost:
                        self.dropped_answers.append(data)
                        continue
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))
