"""A broker restarted without persistence has lost its retained messages: a table's state
and the dealer's prompt stayed missing until the table next changed, and a game server or
dealer display connecting meanwhile saw nothing (a review, with Mosquitto). The bus
publishes each retained topic's last message again at every reconnect."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from retained_support import retained

from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings

sys.path.insert(0, str(Path(__file__).parent.parent / "devices"))
from test_devices_broker_restart import restartable


@pytest.mark.timeout(90)
@pytest.mark.parametrize("kind", ["embedded", "mosquitto"])
async def test_retained_messages_are_there_again_after_a_broker_restart(
    kind: str, table_id: str, tmp_path: Path
) -> None:
    state, cleared = f"{table_id}/round/state", f"{table_id}/dealer/prompt"
    async with restartable(kind, tmp_path) as (url, restart):
        # Reconnects within 0.25 s of the broker's return (the default backoff grows to 5 s).
        backoff = Backoff(initial=0.05, maximum=0.25)
        async with MessageBus(
            BrokerSettings(url=url), f"{table_id}-publisher", backoff=backoff
        ) as bus:
            await bus.wait_connected()
            await bus.publish(state, b"first", retain=True)
            await bus.publish(state, b"second", retain=True)
            await bus.publish(cleared, b"old", retain=True)
            await bus.publish(cleared, b"", retain=True)  # cleared: not brought back
            await bus.publish(f"{table_id}/events", b"not retained")
            await bus.flush()
            connects = bus.stats.connects
            await restart()
            async with asyncio.timeout(30):
                while bus.stats.connects == connects:
                    await asyncio.sleep(0.05)
            await bus.flush()
            assert await retained(BrokerSettings(url=url), state) == [(state, b"second")]
            assert await retained(BrokerSettings(url=url), cleared) == []
            assert bus.stats.republished_retained == 1
