"""Helpers shared by the studio benchmarks (run as scripts from this folder)."""

from __future__ import annotations

import asyncio
from datetime import datetime

from hwsim.table import SimTable
from studio.controller import ControllerService, TableController
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext

TOKEN = "benchmark-token"


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
