"""Helpers shared by the studio benchmarks (run as scripts from this folder)."""

from __future__ import annotations

from studio.controller import ControllerService
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
