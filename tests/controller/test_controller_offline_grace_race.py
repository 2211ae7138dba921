"""A device's held ``offline`` taken back (its ``online``) while another device's was being
applied ended the controller: the loop over the held ones had copied them, and the one
taken back raised KeyError (a review: a restarted demo's controller stopped 10 s in)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


async def test_an_offline_taken_back_while_another_is_applied_is_skipped(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = StudioConfig(tables=[TableSettings(id="bj-1", ruleset="clubhouse")])
    service = ControllerService(config, None, EventLog(database), Fanout(None), timers=False)
    applied: list[dict[str, Any]] = []

    async def apply(table_id: str, kind: str, data: dict[str, Any]) -> None:
        applied.append(data)
        # While this one is applied, the other device's `online` comes: taken back.
        service._offline_due.pop(("bj-1", "cam"), None)

    monkeypatch.setattr(service, "_apply", apply)
    monkeypatch.setattr(service, "_unchanged_availability", lambda *_: False)
    due = asyncio.get_running_loop().time() - 1
    service._offline_due[("bj-1", "shoe")] = (due, {"device": "shoe", "state": "offline"}, due)
    service._offline_due[("bj-1", "cam")] = (due, {"device": "cam", "state": "offline"}, due)
    task = asyncio.create_task(service._offline_after_grace(), name="test:offline-grace")
    await asyncio.sleep(0.3)
    assert not task.done(), task.exception()  # it runs on
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert applied == [{"device": "shoe", "state": "offline"}]
