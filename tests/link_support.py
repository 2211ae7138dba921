"""A TCP hop to the real broker that can lose the broker's answers (tests of bus and drivers)."""

from __future__ import annotations

import asyncio
import contextlib

from studio.config import BrokerSettings


class AckLosingLink:
    """A TCP hop between a driver and the real broker that can stop passing the broker's
    answers: what the driver publishes still reaches the broker (and its subscribers), but
    no PUBACK comes back, as when a link dies between a delivery and its acknowledgement."""

    def __init__(self, upstream: BrokerSettings) -> None:
        self.upstream = upstream
        self.answers_lost = False
        self.dropped_answers: list[bytes] = []  # what of the broker's answers was swallowed
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    @property
    def settings(self) -> BrokerSettings:
        return self.upstream.model_copy(update={"url": f"mqtt://127.0.0.1:{self.port}"})

    async def __aenter__(self) -> AckLosingLink:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.upstream.host, self.upstream.port)
        self._writers += [writer, up_writer]

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, answers: bool) -> None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await src.read(65536):
                    if answers and self.answers_lost:
                        self.dropped_answers.append(data)
                        continue
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))
