"""Fan-out of controller outputs.

The controller hands each input's outputs to :meth:`Fanout.emit_many` together; the
fan-out gives them all to every local listener (WebSocket and SSE connections) in one
step, then publishes each on its MQTT topic (state and prompt retained, events not;
device status has none); :meth:`Fanout.command_error` publishes the answer to a game
command the controller could not read, on MQTT only. A listener that cannot keep up is
cut off rather than allowed to slow the controller down; it reconnects and catches up from the REST history, or, over SSE, resumes from the
last event id it got while the fan-out still holds what came after (``listen(resume=)``);
when it no longer does, the stream says so (``stream_reset``) and starts afresh.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from studio.bus import MessageBus
from studio.contract import CommandError, ResetReason, StreamReset, Topics

_LOGGER = logging.getLogger(__name__)

# An event id as this fan-out writes them, ``{run}-{n}`` (run in hex), for SSE's
# Last-Event-ID and the WebSocket's ``?after=`` alike. ASCII digits only, at most 18:
# str.isdigit would pass "²", which int() refuses, and "١" (Arabic-Indic), which int() reads
# as 1; int() also refuses more than 4300 digits.
EVENT_ID = re.compile(r"[0-9a-f]{1,64}-[0-9]{1,18}", re.ASCII)


class Channel(StrEnum):
    ROUND_EVENTS = "round_events"
    ROUND_STATE = "round_state"
    ALERTS = "alerts"
    DEALER_PROMPT = "dealer_prompt"
    DEVICES = "devices"
    # No output: the first message of a stream asked to resume that starts afresh instead.
    STREAM_RESET = "stream_reset"


# Snapshots: a new listener starts with the latest of each, and those with an MQTT topic
# are retained there. `devices` has none: the drivers publish availability and health
# on MQTT themselves, so the controller's view of them goes to WebSocket and SSE only.
_SNAPSHOTS = {Channel.ROUND_STATE, Channel.DEALER_PROMPT, Channel.DEVICES}


def _topic(topics: Topics, channel: Channel) -> str | None:
    return {
        Channel.ROUND_EVENTS: topics.round_events,
        Channel.ROUND_STATE: topics.round_state,
        Channel.ALERTS: topics.alerts,
        Channel.DEALER_PROMPT: topics.dealer_prompt,
    }.get(channel)


@dataclass(frozen=True, slots=True)
class StreamMessage:
    table: str
    channel: Channel
    data: dict[str, Any]
    # Its place in the fan-out's output (all tables), from 1: what an SSE event id names.
    # 0: no place in it (a stream_reset), so no event id.
    ident: int = field(default=0, compare=False)
    # The JSON text every connection sends, encoded once rather than once per listener.
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", json.dumps(self.as_json_obj()))

    def as_json_obj(self) -> dict[str, Any]:
        return {"table": self.table, "channel": self.channel.value, "data": self.data}


@dataclass(frozen=True, slots=True)
class Emission:
    """One output for :meth:`Fanout.emit_many`: its channel, payload and ``on_acked``."""

    channel: Channel
    payload: BaseModel
    on_acked: Callable[[], object] | None = None


class EndReason(StrEnum):
    """Why the fan-out ended a listener's stream (the connection says so as it closes)."""

    TOO_SLOW = "too_slow"
    SHUTDOWN = "shutdown"


class _Listener:
    def __init__(self, table: str | None, limit: int, run: str, floor: int) -> None:
        self.table = table
        self.queue: asyncio.Queue[StreamMessage | None] = asyncio.Queue(limit)
        self.ended: EndReason | None = None
        self._run = run
        # The stream's position when it started (or the id it resumed from): a snapshot
        # handed over at the start is named by it, so that resuming from it replays only
        # what came after, never a snapshot again or the events before it.
        self._floor = floor

    def event_id(self, message: StreamMessage) -> str | None:
        """The SSE id of ``message`` on this stream: ``{run}-{n}``; None for a message that
        names no place in the output (a stream_reset): resuming from it could only mean
        resuming from the id the client asked for, which is why it was sent."""
        if not message.ident:
            return None
        return f"{self._run}-{max(message.ident, self._floor)}"

    @property
    def overflowed(self) -> bool:
        return self.ended is EndReason.TOO_SLOW

    def end(self, reason: EndReason) -> None:
        """Replace the backlog with the end-of-stream marker so the connection closes."""
        if self.ended is not None:
            return
        self.ended = reason
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


class Fanout:
    def __init__(self, bus: MessageBus | None, *, listener_queue: int = 1000) -> None:
        self.bus = bus
        self._listeners: set[_Listener] = set()
        self._limit = listener_queue
        # Latest snapshot per (table, channel), so a new listener starts current.
        self._latest: dict[tuple[str, Channel], StreamMessage] = {}
        # Event ids name this run: an id from before a restart is not resumed from.
        self.run = secrets.token_hex(4)
        self._last_ident = 0
        # Per table, its last `listener_queue // 2` messages (a resumed stream's backlog
        # leaves half its queue for what comes live, or it would be cut as too slow at
        # once), and the newest id pushed out of them: resuming from before it would skip
        # messages.
        self._history: dict[str, deque[StreamMessage]] = {}
        self._forgotten: dict[str, int] = {}

    async def emit(
        self,
        table: str,
        channel: Channel,
        payload: BaseModel,
        *,
        on_acked: Callable[[], object] | None = None,
    ) -> None:
        """Hand ``payload`` to the streams and MQTT. ``on_acked``: called once the broker has
        it (at once when there is no broker or the channel has no topic)."""
        await self.emit_many(table, [Emission(channel, payload, on_acked)])

    async def emit_many(self, table: str, emissions: Sequence[Emission]) -> None:
        """Hand several outputs of ``table`` (one input's, in order) to the streams in one
        step, then publish them on MQTT in that order.

        Nothing awaits until every one of them is in the snapshots and the listeners'
        queues: a listener joining in between would otherwise start with a snapshot from
        before them and miss the events handed over before it joined (a review: a stream
        opened while one input's outputs went out one by one started with the previous
        round state, then got the round's settlement, two events later, with no word)."""
        messages = [self._post(table, e.channel, e.payload) for e in emissions]
        for emission, message in zip(emissions, messages, strict=True):
            topic = _topic(Topics(table), message.channel) if self.bus is not None else None
            if self.bus is not None and topic is not None:
                retain = message.channel in _SNAPSHOTS
                await self.bus.publish(
                    topic, emission.payload, qos=1, retain=retain, on_acked=emission.on_acked
                )
            elif emission.on_acked is not None:
                emission.on_acked()

    async def command_error(self, notice: CommandError) -> None:
        """Publish ``notice`` (a game command the controller could not read) on its table's
        ``game/command_errors``: MQTT only, not retained. It answers an MQTT message (REST
        answers such a body 422 itself), so it is no stream message: no channel, no event
        id, not kept for resuming streams, whose history a flood of them would push out."""
        if self.bus is not None:
            topic = Topics(notice.table).command_errors
            await self.bus.publish(topic, notice, qos=1, retain=False)

    def _post(self, table: str, channel: Channel, payload: BaseModel) -> StreamMessage:
        """Number an output, keep it for resuming streams, and hand it to the listeners."""
        data = payload.model_dump(mode="json")
        self._last_ident += 1
        message = StreamMessage(table, channel, data, self._last_ident)
        history = self._history.setdefault(table, deque(maxlen=max(1, self._limit // 2)))
        if len(history) == history.maxlen:
            self._forgotten[table] = history[0].ident
        history.append(message)
        # The snapshot and the listeners are updated together, before anything awaits:
        # a listener joining while this emit waits on MQTT (a full outbox while the
        # broker is away) would otherwise get the message twice, from the snapshot and
        # live, and the streams would stall with MQTT.
        if channel in _SNAPSHOTS:
            self._latest[(table, channel)] = message
        self._deliver(message)
        return message

    def _deliver(self, message: StreamMessage) -> None:
        for listener in list(self._listeners):
            if listener.ended is not None:
                continue  # its end-of-stream marker is the last thing it gets
            if listener.table is not None and listener.table != message.table:
                continue
            try:
                listener.queue.put_nowait(message)
            except asyncio.QueueFull:
                self._listeners.discard(listener)
                listener.end(EndReason.TOO_SLOW)
                _LOGGER.warning("stream listener for %s too slow; disconnecting it", message.table)

    def latest(self, table: str) -> list[StreamMessage]:
        return [m for (t, _), m in self._latest.items() if t == table]

    def _missed(self, table: str, resume: str) -> tuple[int, list[StreamMessage]] | ResetReason:
        """The table's messages after event id ``resume``, or why they cannot be had: it is
        no event id (a malformed one included: a client's header must not fail the stream),
        another run's (the process restarted), past anything this run sent, or too far
        back (some of them are no longer kept)."""
        resume = resume.strip()
        if not EVENT_ID.fullmatch(resume):
            return "not_an_id"
        run, _, number = resume.rpartition("-")
        if run != self.run:
            return "unknown_run"
        after = int(number)
        if after > self._last_ident:
            return "not_sent"
        if self._forgotten.get(table, 0) > after:
            return "too_old"
        kept = self._history.get(table, ())
        return after, [m for m in kept if m.ident > after]

    @asynccontextmanager
    async def listen(
        self, table: str | None = None, *, resume: str | None = None
    ) -> AsyncIterator[_Listener]:
        """Yield a listener whose queue receives every message for ``table`` (None: all).

        It starts with the latest snapshots; with ``resume`` (an event id this stream's
        client got, SSE's ``Last-Event-ID``) instead with the table's messages after it,
        when they are all still kept, and when not with a ``stream_reset`` saying why
        before the snapshots: without it a client could not tell them from what it asked
        for, and would not know to catch up from REST. A stream that asked for nothing
        gets none: it knows it starts afresh.
        """
        missed = self._missed(table, resume) if table is not None and resume else None
        if isinstance(missed, tuple):
            listener = _Listener(table, self._limit, self.run, missed[0])
            for message in missed[1]:
                listener.queue.put_nowait(message)
        else:
            listener = _Listener(table, self._limit, self.run, self._last_ident)
            if missed is not None and table is not None and resume is not None:
                reset = StreamReset(table=table, reason=missed, after=resume)
                listener.queue.put_nowait(
                    StreamMessage(table, Channel.STREAM_RESET, reset.model_dump(mode="json"))
                )
            for message in self._latest.values():
                if table is None or message.table == table:
                    listener.queue.put_nowait(message)
        self._listeners.add(listener)
        try:
            yield listener
        finally:
            self._listeners.discard(listener)

    def end_streams(self) -> None:
        """End every listener's stream now (the web server is stopping)."""
        for listener in list(self._listeners):
            self._listeners.discard(listener)
            listener.end(EndReason.SHUTDOWN)

    @property
    def listener_count(self) -> int:
        return len(self._listeners)
