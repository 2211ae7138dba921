"""Helpers shared by the studio benchmarks (run as scripts from this folder)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from datetime import datetime
from typing import TypeVar

from hwsim.table import SimTable
from studio.controller import ControllerService, TableController
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext

TOKEN = "benchmark-token"
T = TypeVar("T")


def bench_context(
    fanout: Fanout, log: EventLog, db: Database, service: ControllerService
) -> WebContext:
    """A web context whose streams accept the benchmark's platform token."""
    ctx = WebContext(fanout, log, db, service)
    ctx.extras["platform_token"] = TOKEN
    return ctx


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nan when there are none)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def load_shoe_if_asked(sim: SimTable, table: TableController, now: datetime) -> None:
    """Act as the dealer when the prompt asks for a shoe: one shoe at a time."""
    if table.at(now).prompt().action in ("shuffle", "change_shoe", "load_shoe"):
        loaded = table.shoe.shoe_id
        sim.new_shoe()
        async with asyncio.timeout(10):
            while table.shoe.shoe_id == loaded:
                await asyncio.sleep(0.01)


async def timed(work: Awaitable[T]) -> tuple[T, float, float]:
    """``work``'s result, its seconds, and the longest the loop was held meanwhile (s)."""
    held, done = 0.0, False

    async def ticker() -> None:
        nonlocal held
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            held, last = max(held, now - last - 0.001), now

    tick = asyncio.create_task(ticker(), name="ticker")
    started = time.perf_counter()
    result = await work
    elapsed = time.perf_counter() - started
    done = True
    await tick
    return result, elapsed, held
