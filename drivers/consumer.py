"""The consumer side of a device's event stream: de-duplication and gap repair.

QoS 1 may deliver twice, a broker restart may drop what was in flight to a
consumer, and a replay re-sends. :class:`DeviceFeed` runs every event of one
device through a :class:`SequenceTracker` and, when a seq is missing (or right
after the consumer's own reconnect, when the tail may be missing and nothing
later would reveal it), publishes a :class:`ReplayRequest` so the driver
re-publishes from its replay buffer::

    async with DeviceFeed(bus, topics, "shoe-1", {topics.shoe_cards: ShoeCard,
                                                  topics.shoe_events: DeviceEvent}) as feed:
        async for event in feed:      # each (device, seq) exactly once
            ...

All topics of a device share its seq space (the shoe's cards and its other
events), so a feed must subscribe to all of them for gap detection to be right.
Events repaired by a replay arrive after later ones; ``seq`` gives the order.
A seq asked for ``gap_requests`` times that still has not come (the driver gave it up
as lost, or it fell out of the replay buffer) is given up as the controller gives
it up: counted in ``stats["lost"]``, logged, handed to ``on_lost``, and no longer asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from studio.bus import MAX_SEQ_JUMP, MessageBus, SequenceTracker, SeqVerdict
from studio.contract import ReplayRequest, SourceEvent, Topics

_LOGGER = logging.getLogger(__name__)


class DeviceFeed:
    def __init__(
        self,
        bus: MessageBus,
        topics: Topics,
        device: str,
        models: dict[str, type[SourceEvent]],
        *,
        requester: str = "",
        repair_interval: float = 0.5,
        tail_window: float = 5.0,
        gap_requests: int = 10,
        on_lost: Callable[[list[int]], object] | None = None,
    ) -> None:
        self.bus = bus
        self.topics = topics
        self.device = device
        self.models = models
        self.requester = requester or bus.client_id
        self.repair_interval = repair_interval
        self.tail_window = tail_window
        # Replays asked for one gap before its seqs count as lost (the controller's rule):
        # asked for forever, a seq the driver no longer has cost a request every interval.
        self.gap_requests = gap_requests
        self.on_lost = on_lost
        self._asks: Counter[int] = Counter()  # missing seq -> replays asked for it
        self.tracker = SequenceTracker()
        self.stats: Counter[str] = Counter()
        self._queue: asyncio.Queue[SourceEvent] = asyncio.Queue()
        self._stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> DeviceFeed:
        self._stack = contextlib.AsyncExitStack()
        group = await self._stack.enter_async_context(asyncio.TaskGroup())
        self._tasks = []
        for topic, model in self.models.items():
            sub = await self._stack.enter_async_context(self.bus.subscribe(topic, model))
            self._tasks.append(group.create_task(self._pump(sub), name=f"feed:{topic}"))
        self._tasks.append(group.create_task(self._repair(), name=f"feed-repair:{self.device}"))
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for task in self._tasks:
            task.cancel()
        assert self._stack is not None
        await self._stack.aclose()

    async def _pump(self, sub: Any) -> None:
        async for received in sub:
            event = received.payload
            if event.device != self.device:
                continue
            self._numbering_jump(event.seq)
            if self.tracker.observe(self.device, event.seq) is SeqVerdict.DUPLICATE:
                self.stats["duplicates"] += 1
                continue
            self.stats["fresh"] += 1
            self._queue.put_nowait(event)

    async def _repair(self) -> None:
        loop = asyncio.get_running_loop()
        connects = self.bus.stats.connects
        tail_until = 0.0
        while True:
            await asyncio.sleep(self.repair_interval)
            if self.bus.stats.connects != connects:
                # We were away: whatever came last may never have reached us.
                connects = self.bus.stats.connects
                tail_until = loop.time() + self.tail_window
            missing = self.tracker.missing(self.device)
            for seq in set(self._asks) - set(missing):  # filled
                del self._asks[seq]
            done = [seq for seq in missing if self._asks[seq] >= self.gap_requests]
            if done:
                self._give_up(done)  # (a later hole keeps its own count)
                missing = [seq for seq in missing if seq not in done]
            if missing:
                for seq in missing:
                    self._asks[seq] += 1
                await self.request_replay(missing[0], missing[-1])
            elif loop.time() < tail_until and self.tracker.last_contiguous(self.device) > 0:
                await self.request_replay(self.tracker.last_contiguous(self.device) + 1, None)

    def _numbering_jump(self, seq: int) -> None:
        """A seq more than MAX_SEQ_JUMP ahead: the device's numbering jumped (a replaced
        device, a driver that lost its state and numbers from the Unix time in ms). The seqs
        between are skipped, not asked for, as the controller skips them: asked for 1,000
        at a time, a jump to the Unix-ms base was a hole of 1.8e12 seqs, never closed, and
        every request a `replay_unavailable` health report (a review)."""
        last = self.tracker.last_contiguous(self.device)
        if not last or seq - last <= MAX_SEQ_JUMP:
            return
        _LOGGER.warning(
            "%s: numbering jumped from %d to %d; the events between are not asked for",
            self.device,
            last,
            seq,
        )
        self.tracker.skip(self.device, seq - 1)
        for asked in [s for s in self._asks if s < seq]:
            del self._asks[asked]
        self.stats["jumps"] += 1

    def _give_up(self, seqs: list[int]) -> None:
        _LOGGER.warning(
            "%s: events %s never arrived after %d replay requests",
            self.device,
            seqs,
            self.gap_requests,
        )
        for seq in seqs:
            self.tracker.observe(self.device, seq)  # seen: never asked for again
            del self._asks[seq]
        self.stats["lost"] += len(seqs)
        if self.on_lost is not None:
            self.on_lost(seqs)

    async def request_replay(self, from_seq: int, to_seq: int | None) -> None:
        self.stats["replay_requests"] += 1
        await self.bus.publish(
            self.topics.replay(self.device),
            ReplayRequest(from_seq=from_seq, to_seq=to_seq, requester=self.requester),
        )

    async def get(self) -> SourceEvent:
        return await self._queue.get()

    def __aiter__(self) -> AsyncIterator[SourceEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[SourceEvent]:
        while True:
            yield await self._queue.get()

    def payloads(self) -> list[BaseModel]:
        """Drain what has arrived so far without waiting."""
        out: list[BaseModel] = []
        while not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out
