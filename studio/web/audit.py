"""The chains' check shared by every reader: the console's audit page and GET /api/audit/chain.

A walk hashes records on the event loop (a 50,000-record log: 1.2 s, the loop stalled up
to 233 ms at a time), so a check runs at most once per ``CACHE_SECONDS`` and one at a
time: readers who ask meanwhile share its result. Between walks of the whole log (at
most ``FULL_SECONDS`` apart, and whenever a manager asks) a check walks only what was
appended since the last sound one, from its head: a log that grows all shift no longer
makes every check longer (52,000 records took 1.1 s a check, 30 s apart).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from studio.store.database import serving_readers
from studio.store.eventlog import ChainReport, EventLog, admin_events

CACHE_SECONDS = 30.0
FULL_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class ChainCheck:
    events: ChainReport
    admin: ChainReport
    checked_at: datetime
    # When the whole of both logs was last walked: what this check adds to is that walk's.
    full_checked_at: datetime


@dataclass(frozen=True, slots=True)
class _Sound:
    """The heads of the last check that found both chains sound, and its full walk."""

    events: tuple[int, str]
    admin: tuple[int, str]
    full_at: datetime
    full_monotonic: float


class SharedChainCheck:
    def __init__(self, log: EventLog, *, full_seconds: float = FULL_SECONDS) -> None:
        self.log = log
        self.full_seconds = full_seconds
        self._last: tuple[float, ChainCheck] | None = None
        self._running: asyncio.Task[ChainCheck] | None = None
        self._running_full = False
        self._sound: _Sound | None = None

    async def check(self, *, force: bool = False) -> ChainCheck:
        """The latest check if under ``CACHE_SECONDS`` old (and not ``force``), else a new one
        (``force``: a walk of the whole log); a check under way is joined (forced, only a
        full walk: a short one is waited for, then the whole log walked)."""
        if force and self._running is not None and not self._running_full:
            # A short check under way: a manager who asked for a full walk gets one after it.
            with contextlib.suppress(Exception):
                await asyncio.shield(self._running)
        if self._running is None:
            fresh = self._last is not None and time.monotonic() - self._last[0] < CACHE_SECONDS
            if fresh and not force:
                assert self._last is not None
                return self._last[1]
            sound = self._sound
            self._running_full = (
                force
                or sound is None
                or time.monotonic() - sound.full_monotonic >= self.full_seconds
            )
            walk = self._walk(None if self._running_full else sound)
            self._running = asyncio.create_task(_for_readers(walk), name="audit-chain-check")
        # Shielded: a reader that goes away must not cancel the walk the others wait for.
        return await asyncio.shield(self._running)

    async def _walk(self, sound: _Sound | None) -> ChainCheck:
        """Both chains from the heads of ``sound`` (None: the whole of both logs)."""
        try:
            admin_log = EventLog(self.log.db, admin_events)
            if sound is None:
                started = time.monotonic()
                events = await self.log.verify()
                admin = await admin_log.verify()
                full_at, full_monotonic = datetime.now(UTC), started
            else:
                events = await self.log.verify(resume=sound.events)
                admin = await admin_log.verify(resume=sound.admin)
                full_at, full_monotonic = sound.full_at, sound.full_monotonic
            result = ChainCheck(events, admin, datetime.now(UTC), full_at)
            self._sound = (
                _Sound(
                    (events.head_id, events.head),
                    (admin.head_id, admin.head),
                    full_at,
                    full_monotonic,
                )
                if events.ok and admin.ok
                else None  # a problem is walked in full again each time, from the start
            )
            self._last = (time.monotonic(), result)
            return result
        finally:
            self._running = None


async def _for_readers(walk: Coroutine[Any, Any, ChainCheck]) -> ChainCheck:
    """The walk, its reads bounded as its readers' own are (``Database.read_timeout``, each
    batch of it): a task of its own, which a database that stopped answering held, and
    every reader waiting for it."""
    with serving_readers():
        return await walk
