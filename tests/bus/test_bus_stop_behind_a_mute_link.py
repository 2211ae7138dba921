"""A device's bus stopped behind a link that loses the broker's answers (the broker is up,
what the device sends reaches it, no PUBACK comes back): its ``offline`` must still be the
broker's retained availability.

Its stop no longer waits for that ``offline``'s PUBACK once the flush before it has timed
out (the wait only added 2 s); the message is handed to the
socket ahead of the DISCONNECT all the same, which this test holds on both brokers.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType

from test_bus_roundtrip import card

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Availability, Topics


class MuteLink:
    """A TCP hop to the broker that, once ``mute``, drops everything the broker sends."""

    def __init__(self, upstream: BrokerSettings) -> None:
        self.upstream = upstream
        self.mute = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    @property
    def settings(self) -> BrokerSettings:
        return self.upstream.model_copy(update={"url": f"mqtt://127.0.0.1:{self.port}"})

    async def __aenter__(self) -> MuteLink:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.upstream.host, self.upstream.port)
        self._writers += [writer, up_writer]

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, answers: bool) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    if answers and self.mute:
                        continue
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))


async def test_a_stop_behind_a_mute_link_leaves_offline_retained(
    broker: BrokerSettings, table_id: str
) -> None:
    topics = Topics(table_id)
    avail = topics.availability("shoe-1")
    acked: list[int] = []
    running = asyncio.Event()

    async def device(link: MuteLink) -> None:
        async with MessageBus(link.settings, "muted", availability=avail) as bus:
            await bus.wait_connected()
            await bus.publish(topics.shoe_cards, card(1), on_acked=lambda: acked.append(1))
            await bus.flush()
            link.mute = True
            # Never acknowledged: the stop's flush times out on it.
            await bus.publish(topics.shoe_cards, card(2), on_acked=lambda: acked.append(2))
            running.set()
            await asyncio.Event().wait()

    async with MuteLink(broker) as link:
        task = asyncio.create_task(device(link))
        async with asyncio.timeout(20):
            await running.wait()
        task.cancel()  # a stop (SIGTERM)
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(20):
                await task
    assert acked == [1]
    async with MessageBus(broker, "watcher") as watcher:
        async with watcher.subscribe(avail, Availability) as sub, asyncio.timeout(20):
            state = (await sub.get()).payload.state
    assert state == "offline"
