"""The chains' check shared by every reader: the console's audit page and GET /api/audit/chain.

A check walks the whole event log and admin log, hashing every record on the event loop
(a 50,000-record log: 1.2 s, the loop stalled up to 233 ms at a time), so it runs at most
once per ``CACHE_SECONDS`` and one at a time: readers who ask meanwhile share its result.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from studio.store.eventlog import ChainReport, EventLog, admin_events

CACHE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class ChainCheck:
    events: ChainReport
    admin: ChainReport
    checked_at: datetime


class SharedChainCheck:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._last: tuple[float, ChainCheck] | None = None
        self._running: asyncio.Task[ChainCheck] | None = None

    async def check(self, *, force: bool = False) -> ChainCheck:
        """The latest check if under ``CACHE_SECONDS`` old (and not ``force``), else a new one;
        a check under way is joined, forced or not."""
        if self._running is None:
            fresh = self._last is not None and time.monotonic() - self._last[0] < CACHE_SECONDS
            if fresh and not force:
                assert self._last is not None
                return self._last[1]
            self._running = asyncio.create_task(self._walk(), name="audit-chain-check")
        # Shielded: a reader that goes away must not cancel the walk the others wait for.
        return await asyncio.shield(self._running)

    async def _walk(self) -> ChainCheck:
        try:
            events = await self.log.verify()
            admin = await EventLog(self.log.db, admin_events).verify()
            result = ChainCheck(events, admin, datetime.now(UTC))
            self._last = (time.monotonic(), result)
            return result
        finally:
            self._running = None
