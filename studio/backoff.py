"""The one reconnect helper: capped, jittered exponential backoff.

MQTT, serial ports and camera streams all reconnect through :func:`run_forever`,
so every link in the studio behaves the same way when a peer disappears.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
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
    """Logs a failure that repeats without flooding the log: a reason not logged in the last
    ``every`` seconds at once, the same reason again once per ``every`` seconds, saying how
    many went unlogged meanwhile (those are logged at DEBUG). Each reason is throttled on its
    own: the last ``reasons`` logged are remembered (failures alternating between two reasons
    were each logged, when only the last reason was compared). :meth:`clear` ends the run of
    failures, saying in one line how many went unlogged since their reason was last logged.

    A device that never came online was logged at WARNING on every retry (a review)."""

    logger: logging.Logger
    every: float = 60.0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    name: str = ""  # what fails, for the line of :meth:`clear`
    reasons: int = 16  # how many reasons are remembered (the oldest logged is forgotten)
    reason: str | None = None  # of the last failure logged; None: no failure since clear()
    failures: int = 0  # since clear()
    unlogged: int = 0  # since clear(), not logged at their level nor counted in a later line
    # reason -> [when last logged, failures of it unlogged since], the last logged last
    _logged: dict[str, list[float]] = field(default_factory=dict, repr=False)

    def failed(
        self, reason: str, message: str, *args: object, level: int = logging.WARNING
    ) -> bool:
        """Log ``message % args`` at ``level`` unless ``reason`` was logged within ``every``
        seconds (then at DEBUG); return whether it went out at ``level``."""
        self.failures += 1
        now = self.clock()
        last = self._logged.get(reason)
        if last is not None and now - last[0] < self.every:
            last[1] += 1
            self.unlogged += 1
            self.logger.debug(message, *args)
            return False
        if last is not None and last[1]:
            message += " (%d more like it in the last %.0fs, not logged)"
            args = (*args, int(last[1]), now - last[0])
            self.unlogged -= int(last[1])
        self.logger.log(level, message, *args)
        self._logged.pop(reason, None)
        self._logged[reason] = [now, 0]
        while len(self._logged) > max(1, self.reasons):
            # Forgotten: its unlogged failures stay counted in ``unlogged`` (for clear()).
            del self._logged[next(iter(self._logged))]
        self.reason = reason
        return True

    def clear(self, *, say: bool = True) -> int:
        """The failures are over (the link is up again): return how many there were. Those
        not logged since their reason was last logged are said in one INFO line (unless
        ``say`` is false: the caller said the tally its own way)."""
        failures, unlogged = self.failures, self.unlogged
        if unlogged and say:
            self.logger.info(
                "%s%d of %d failures were not logged (the same reason again within %.0fs)",
                f"{self.name}: " if self.name else "",
                unlogged,
                failures,
                self.every,
            )
        self.reason, self.failures, self.unlogged = None, 0, 0
        self._logged.clear()
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
    count (:class:`RepeatedFailure`), until the session was up ``healthy_after`` seconds:
    then one INFO line says how many failures went unlogged, if any.
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
    failures = RepeatedFailure(logger, name=name)
    resets = backoff.resets
    while stop is None or not stop.is_set():
        started = time.monotonic()
        error: BaseException | None = None
        # A session up ``healthy_after`` seconds ends the run of failures before it: their
        # tally (how many went unlogged) is said then, not only at the next failure.
        up = (
            asyncio.get_running_loop().call_later(healthy_after, failures.clear)
            if math.isfinite(healthy_after)
            else None
        )
        try:
            if await session() is True:
                return
        except retry_on as exc:
            error = exc
        finally:
            if up is not None:
                up.cancel()
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
            # Not said now, as the link drops again (maybe hours later): the timer above
            # said it when the session had been up healthy_after, or the caller did when
            # it reset the backoff (a device: "ok: connected ... (after N failed connects)").
            failures.clear(say=False)
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
