"""Log lines that others can cause at will (a device's malformed payloads, connections
refused at the web port): the first goes out at once, then at most one per interval, the
rest counted, so a flood neither fills the disk nor holds the loop writing it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

# Keys named by strangers (the topics of malformed payloads) are bounded: past this many,
# the record starts again (a line each may go out early once; none is lost from counts kept
# elsewhere).
MAX_KEYS = 10_000


class LogThrottle:
    """Lets one line per key through every ``interval`` seconds and counts the others."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._next: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def due(self, key: str = "") -> int | None:
        """None: not now (counted); else how many were held back since the last one."""
        now = self._clock()
        if now < self._next.get(key, -math.inf):
            self._held[key] = self._held.get(key, 0) + 1
            return None
        if key not in self._next and len(self._next) >= MAX_KEYS:
            self._next.clear()
            self._held.clear()
        self._next[key] = now + self.interval
        return self._held.pop(key, 0)
