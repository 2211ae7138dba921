"""An input whose caller stopped waiting (a stop, a client gone) and that then failed is
logged once: asyncio printed "Task exception was never retrieved" with a traceback at
shutdown for each (a review, with the disk full at a stop)."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.streams import Fanout


async def test_a_failure_nobody_waits_for_is_logged_once(
    database: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = StudioConfig(tables=[TableSettings(id="bj-1", ruleset="clubhouse")])
    service = ControllerService(config, None, EventLog(database), Fanout(None), timers=False)
    release = asyncio.Event()

    async def failing(*_: Any, **__: Any) -> list[Any]:
        await release.wait()
        raise StoreError("event log append failed: disk full")

    monkeypatch.setattr(service, "_submit", failing)
    unretrieved: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    caller = asyncio.create_task(service.submit("bj-1", "timer", {}), name="test:caller")
    await asyncio.sleep(0)
    caller.cancel()  # the caller stops waiting; the input goes on (shielded)
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    await service._settle()
    del caller
    gc.collect()
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert unretrieved == []
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "timer on bj-1 failed after its caller stopped waiting: event log append failed: disk full"
    ]
