"""The fan-out's hand-over to local listeners, against a real broker."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import RoundEvent, RoundState
from studio.streams import Channel, EndReason, Fanout, StreamMessage


def state(table: str, seq: int, phase: str) -> RoundState:
    return RoundState(table=table, round_id="r1", seq=seq, ts=datetime.now(UTC), phase=phase)


def drained(queue: asyncio.Queue[StreamMessage | None]) -> list[StreamMessage | None]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


async def test_a_listener_joining_while_mqtt_holds_an_emit_gets_it_once(
    broker: BrokerSettings, table_id: str
) -> None:
    # A one-message outbox: the second publish waits for the broker's ack of the first,
    # as every publish does when the broker is away and the outbox is full.
    async with MessageBus(broker, "fanout", outbox_limit=1) as bus:
        await bus.wait_connected()
        fanout = Fanout(bus)
        await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, 1, "betting"))
        held = asyncio.create_task(
            fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, 2, "dealing"))
        )
        await asyncio.sleep(0)  # the second emit is now waiting on MQTT
        async with fanout.listen(table_id) as listener:
            await held
            got = drained(listener.queue)
        await bus.flush()
    phases = [m.data["phase"] for m in got if m is not None]
    assert phases == ["dealing"]  # the snapshot, and no second copy from the live feed


async def test_local_listeners_do_not_wait_for_mqtt(broker: BrokerSettings, table_id: str) -> None:
    async with MessageBus(broker, "fanout", outbox_limit=1) as bus:
        await bus.wait_connected()
        fanout = Fanout(bus)
        async with fanout.listen(table_id) as listener:
            await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, 1, "betting"))
            event = RoundEvent(
                table=table_id, round_id="r1", seq=1, ts=datetime.now(UTC), type="round_opened"
            )
            held = asyncio.create_task(fanout.emit(table_id, Channel.ROUND_EVENTS, event))
            await asyncio.sleep(0)
            # The broker has not acknowledged the state yet, the event waits for it on
            # MQTT; the stream already has both.
            got = drained(listener.queue)
            await held
        await bus.flush()
    assert [m.channel for m in got if m is not None] == [
        Channel.ROUND_STATE,
        Channel.ROUND_EVENTS,
    ]


async def test_an_ended_stream_gets_nothing_after_its_end(
    table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    async with fanout.listen(table_id) as listener:
        listener.end(EndReason.SHUTDOWN)  # as a stream opened while the server stops does
        for seq in range(1, 6):
            await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, seq, "betting"))
        assert drained(listener.queue) == [None]
    assert listener.ended is EndReason.SHUTDOWN
    assert "too slow" not in caplog.text
