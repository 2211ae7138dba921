"""Fault injection for the demo: at a low rate, the things that go wrong in a studio."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Callable

from hwsim.table import SimTable
from studio.errors import DeviceError

_LOGGER = logging.getLogger(__name__)

FAULTS = ("misread", "camera_mismatch", "double_pull", "shuffler_count", "unplug")


class FaultInjector:
    """Every ``interval`` seconds, with probability ``rate``, one fault on one table."""

    def __init__(
        self,
        tables: list[SimTable],
        *,
        rate: float,
        seed: int,
        interval: float = 2.0,
        camera_mismatch: Callable[[str], bool] | None = None,
        eligible: Callable[[str], bool] | None = None,
    ) -> None:
        self.tables = tables
        self.rate = rate
        self.rng = random.Random(seed)
        self.interval = interval
        self.camera_mismatch = camera_mismatch
        self.eligible = eligible
        self.injected: Counter[str] = Counter()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self.rng.random() >= self.rate:
                continue
            # Faults strike while cards are being dealt, as they do at a real table.
            ready = [t for t in self.tables if self.eligible is None or self.eligible(t.id)]
            if not ready:
                continue
            table = self.rng.choice(ready)
            fault = self.rng.choice(FAULTS)
            try:
                await self.inject(table, fault)
            except DeviceError as exc:
                # A device that cannot take the fault now (no shoe loaded, jammed): escaping,
                # it ended the whole demo (a crash review).
                _LOGGER.warning("fault %s on %s not injected: %s", fault, table.id, exc)

    async def inject(self, table: SimTable, fault: str) -> None:
        _LOGGER.info("injecting %s on %s", fault, table.id)
        self.injected[fault] += 1
        if fault == "misread":
            await table.fault("shoe", "misread")
        elif fault == "double_pull":
            await table.fault("shoe", "double_pull")
        elif fault == "shuffler_count":
            await table.fault("shuffler", "missing_card")
        elif fault == "unplug":
            await table.fault("shoe", "unplug")
            await asyncio.sleep(1.5)
            await table.fault("shoe", "replug")
        elif fault == "camera_mismatch" and (
            self.camera_mismatch is None or not self.camera_mismatch(table.id)
        ):
            # A single-source table has no camera to disagree: the shoe misreads instead.
            self.injected[fault] -= 1
            await self.inject(table, "misread")
