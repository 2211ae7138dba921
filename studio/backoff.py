"""The one reconnect helper: capped, jittered exponential backoff.

MQTT, serial ports and camera streams all reconnect through :func:`run_forever`,
so every link in the studio behaves the same way when a peer disappears.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

_LOGGER = logging.getLogger(__name__)


@dataclass
class Backoff:
    """Exponential delays ``initial * factor**n``, capped at ``maximum``, with +/- ``jitter``."""

    initial: float = 0.1
    maximum: float = 10.0
    factor: float = 2.0
    jitter: float = 0.2
    rng: random.Random = field(default_factory=random.Random, repr=False)
    attempts: int = 0

    def next_delay(self) -> float:
        base = min(self.maximum, self.initial * self.factor**self.attempts)
        if base < self.maximum:
            # Stop counting at the cap: factor**attempts would overflow a float after about
            # 1024 failures in a row (half an hour of an unplugged device), killing the caller.
            self.attempts += 1
        # Jitter spreads out reconnect storms when a broker restarts under many clients.
        spread = base * self.jitter
        return max(0.0, min(self.maximum, base + self.rng.uniform(-spread, spread)))

    def reset(self) -> None:
        self.attempts = 0

    async def wait(self) -> float:
        delay = self.next_delay()
        await asyncio.sleep(delay)
        return delay


async def run_forever(
    name: str,
    session: Callable[[], Awaitable[bool | None]],
    *,
    retry_on: tuple[type[BaseException], ...],
    backoff: Backoff | None = None,
    healthy_after: float = 5.0,
    on_down: Callable[[BaseException | None], Awaitable[None] | None] | None = None,
    logger: logging.Logger = _LOGGER,
    stop: asyncio.Event | None = None,
) -> None:
    """Run ``session`` again and again, waiting with backoff after each failure.

    ``session`` connects, does its work and returns or raises when the link drops.
    Only exceptions in ``retry_on`` are retried; anything else propagates (a bug
    must not be hidden behind a reconnect loop). A session that stayed up for
    ``healthy_after`` seconds resets the backoff, so a flapping link backs off
    but a link that worked for a while reconnects fast.

    A session that returns ``True`` has finished its work (the last frame of a file):
    ``run_forever`` returns at once, without ``on_down``. With ``stop``, setting the event
    ends the loop: it interrupts the wait between two sessions, and a session that
    returns (or fails) once it is set is not retried; the session itself watches ``stop``
    to end early.
    """
    backoff = backoff or Backoff()
    while stop is None or not stop.is_set():
        started = time.monotonic()
        error: BaseException | None = None
        try:
            if await session() is True:
                return
        except retry_on as exc:
            error = exc
        if stop is not None and stop.is_set():
            return
        if time.monotonic() - started >= healthy_after:
            backoff.reset()
        if on_down is not None:
            result = on_down(error)
            if result is not None:
                await result
        delay = backoff.next_delay()
        logger.warning("%s: link down (%s); retrying in %.2fs", name, error or "closed", delay)
        if stop is None:
            await asyncio.sleep(delay)
            continue
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await stop.wait()
