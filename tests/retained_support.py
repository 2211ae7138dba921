"""What a client connecting now is handed retained on a topic and below it (the bus tests and
the controller's port-taken test share it)."""

from __future__ import annotations

import asyncio
import uuid

from pydantic import BaseModel

from studio.bus import MessageBus
from studio.config import BrokerSettings


class Raw(BaseModel):
    data: bytes

    @classmethod
    def from_wire(cls, data: bytes) -> Raw:
        return cls(data=data)


async def retained(broker: BrokerSettings, topic: str) -> list[tuple[str, bytes]]:
    """The (topic, payload) pairs a client connecting now is handed retained on ``topic`` and
    below it: all of them, since a broker hands a subscription's retained messages before it
    handles the client's next packet, here a marker it publishes under the same filter once
    subscribed (instead of waiting a second or more for nothing more to come). The marker is
    below ``topic``: an owner that listens on ``topic`` itself does not see it. (amqtt may
    hand a retained message twice.)"""
    got: list[tuple[str, bytes]] = []
    marker = f"{topic}/end-{uuid.uuid4().hex[:8]}"
    async with MessageBus(broker, f"retained-read-{uuid.uuid4().hex[:8]}") as late:
        async with late.subscribe(f"{topic}/#", Raw) as subscription:  # `topic` too
            await late.wait_connected()
            await late.publish(marker, b"end")
            async with asyncio.timeout(30):
                async for message in subscription:
                    if message.topic == marker:
                        break
                    if message.retain:
                        got.append((message.topic, message.payload.data))
    return got
