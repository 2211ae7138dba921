"""The embedded broker (amqtt), so a demo or a test needs no broker installed.

It listens on 127.0.0.1 only, on a free port (never 1883, where a real broker
usually runs). amqtt 0.12 delivers retained messages to clients that never
subscribed to them; :class:`studio.bus.MessageBus` filters by topic, so every
consumer is safe from that.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from studio.config.models import BrokerSettings
from studio.errors import BusError, ConfigError

_LOGGER = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class _SnapshotDict(dict[Any, Any]):
    """A dict whose iteration (``for k in d``, ``keys``, ``values``, ``items``) walks a
    copy: what the loop's awaits let other tasks change is seen at the next walk."""

    def __iter__(self) -> Iterator[Any]:
        return iter(list(super().keys()))

    def keys(self) -> list[Any]:  # type: ignore[override]
        return list(super().keys())

    def values(self) -> list[Any]:  # type: ignore[override]
        return list(super().values())

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return list(super().items())


class EmbeddedBroker:
    """An in-process MQTT 3.1.1 broker on ``127.0.0.1:{port}``; use as ``async with``."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self._broker: Any = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    async def start(self) -> None:
        from amqtt.broker import Broker  # imported late: amqtt is heavy and only the demo needs it

        # amqtt logs every packet at INFO; the studio's own logs say what matters.
        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.WARNING)
        config = {
            "listeners": {
                "default": {"type": "tcp", "bind": f"{self.host}:{self.port}", "max_connections": 0}
            },
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }
        self._broker = Broker(config)
        # amqtt 0.12.1 walks its subscriptions with awaits inside the loop (a connecting
        # client's retained messages, every broadcast): another client subscribing meanwhile
        # raised "dictionary changed size during iteration", which reset the connecting
        # client (a stress review: four cameras cut off at a demo's start) or could end the
        # broadcast loop. Its loops walk a snapshot instead.
        self._broker._subscriptions = _SnapshotDict(self._broker._subscriptions)
        try:
            await self._broker.start()
        except Exception as exc:
            raise BusError(
                f"embedded broker could not listen on {self.host}:{self.port}: {exc}"
            ) from exc
        _LOGGER.info("embedded MQTT broker listening on %s", self.url)

    async def stop(self) -> None:
        if self._broker is not None:
            broker, self._broker = self._broker, None
            try:
                async with asyncio.timeout(10):
                    await broker.shutdown()
            except (TimeoutError, Exception) as exc:  # shutdown must never mask the real exit path
                _LOGGER.warning("embedded broker shutdown: %s; closing it by force", exc)
                await _force_close(broker)

    async def __aenter__(self) -> EmbeddedBroker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def require_shared_broker(settings: BrokerSettings) -> None:
    """Production processes meet on one broker; an embedded one would be this process's alone."""
    if settings.url is None:
        raise ConfigError(
            "broker.url is not set: the controller, drivers and cameras must share one broker "
            "(e.g. mqtt://127.0.0.1:1883); the embedded broker is for the demo and tests"
        )


@asynccontextmanager
async def broker_for(settings: BrokerSettings) -> AsyncIterator[BrokerSettings]:
    """Yield settings pointing at a broker: the configured one, or an embedded one."""
    if settings.url is not None:
        yield settings
        return
    async with EmbeddedBroker() as broker:
        yield settings.model_copy(update={"url": broker.url})


async def _force_close(broker: Any) -> None:
    """Close what amqtt's shutdown left open: the listening sockets and client connections.

    Without this a broker that overran its shutdown keeps its port bound (a restart on the
    same port fails) and its clients connected (they never notice the broker is gone).
    """
    for server in list(getattr(broker, "_servers", {}).values()):
        instance = getattr(server, "instance", None)
        if instance is not None:
            instance.close()
    for _session, handler in list(getattr(broker, "_sessions", {}).values()):
        writer = getattr(handler, "writer", None)
        if writer is not None:
            try:
                async with asyncio.timeout(1):
                    await writer.close()
            except Exception as exc:  # each connection is closed on a best-effort basis
                _LOGGER.debug("closing a client connection: %s", exc)
