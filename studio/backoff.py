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
    resets: int = 0  # how many times :meth:`reset` was called: a new run of failures starts

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
        self.resets += 1

    async def wait(self) -> float:
        delay = self.next_delay()
        await asyncio.sleep(delay)
        return delay


@dataclass
class RepeatedFailure:
    """Logs a failure that repeats without flooding the log: the first one, one whose reason
    changed, and the same reason again once per ``every`` seconds, saying how many went
    unlogged meanwhile (those are logged at DEBUG). :meth:`clear` ends the run of failures.

    A device that never came online was logged at WARNING on every retry (a review)."""

    logger: logging.Logger
    every: float = 60.0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    reason: str | None = None  # of the last failure logged; None: no failure since clear()
    failures: int = 0  # since clear()
    unlogged: int = 0  # since the last failure logged
    _logged_at: float = field(default=0.0, repr=False)

    def failed(
        self, reason: str, message: str, *args: object, level: int = logging.WARNING
    ) -> bool:
        """Log ``message % args`` at ``level`` unless ``reason`` repeats within ``every``
        seconds (then at DEBUG); return whether it went out at ``level``."""
        self.failures += 1
        now = self.clock()
        if reason == self.reason and now - self._logged_at < self.every:
            self.unlogged += 1
            self.logger.debug(message, *args)
            return False
        if self.unlogged and reason == self.reason:
            message += " (%d more like it in the last %.0fs, not logged)"
            args = (*args, self.unlogged, now - self._logged_at)
        self.logger.log(level, message, *args)
        self.reason, self.unlogged, self._logged_at = reason, 0, now
        return True

    def clear(self) -> int:
        """The failures are over (the link is up again): return how many there were."""
        failures = self.failures
        self.reason, self.failures, self.unlogged = None, 0, 0
        return failures


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

    ``session`` connects, does its work and returns or raises when the link drops. Each
    failure is logged at WARNING, but the same reason again only once a minute, with a
    count (:class:`RepeatedFailure`), until the backoff is reset (the link was up).
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
    failures = RepeatedFailure(logger)
    resets = backoff.resets
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
        if backoff.resets != resets:  # the session was up: what fails now is news
            resets = backoff.resets
            failures.clear()
        delay = backoff.next_delay()
        failures.failed(
            str(error or "closed"),
            "%s: link down (%s); retrying in %.2fs",
            name,
            error or "closed",
            delay,
        )
        if stop is None:
            await asyncio.sleep(delay)
            continue
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await stop.wait()
