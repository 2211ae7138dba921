"""The demo's shoe unplug lasts past the controller's offline grace: a real ``device_offline``.

A review of the manager's console: the demo's ``unplug`` fault replugged the shoe after
1.5 s, inside the controller's 3 s ``OFFLINE_GRACE_SECONDS``, so the shoe's ``offline`` was
taken back by its ``online`` and nothing was raised, though docs/demo.md says every injected
fault raises an alert that pauses the table. Now the shoe stays unplugged past the grace:
the table is paused by a ``device_offline`` alert, which a manager accepts once the shoe is
back online.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from studio.controller.service import OFFLINE_GRACE_SECONDS
from studio.demo import DemoOptions, run_demo
from studio.demo.faults import UNPLUG_SECONDS
from studio.demo.run import DemoHandle


async def _until(condition: Callable[[], bool], timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def test_the_unplug_outlasts_the_offline_grace() -> None:
    assert UNPLUG_SECONDS > OFFLINE_GRACE_SECONDS


@pytest.mark.timeout(180)
async def test_an_injected_unplug_raises_a_device_offline_alert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    stop = asyncio.Event()
    seen: dict[str, object] = {}

    async def check(handle: DemoHandle) -> None:
        try:
            table = handle.service.tables["clubhouse"]
            (shoe,) = [d for d, dev in table.devices.items() if dev.kind == "shoe"]
            await _until(lambda: table.phase == "dealing" and not table.paused)
            await handle.faults.inject(handle.sims["clubhouse"], "unplug")  # and replugged
            await _until(lambda: table.devices[shoe].availability == "online")
            offline = [
                a
                for a in handle.service.alerts(table="clubhouse", reveal=True)
                if a["code"] == "device_offline"
            ]
            seen["alerts"] = [(a["code"], a["evidence"][0]["device"]) for a in offline]
            if offline:
                seen["paused"] = table.paused
                await handle.service.resolve_alert(
                    offline[0]["alert_id"], "accept", user="manager", reason="shoe replugged"
                )
                resolved = handle.service.alerts(state="resolved", table="clubhouse")
                seen["resolved"] = [a["alert_id"] for a in resolved]
                seen["offline"] = offline[0]["alert_id"]
        finally:
            stop.set()

    options = DemoOptions(
        tables=1,  # clubhouse
        pace=0.1,
        seed=5,
        fault_rate=0.0,  # the injector's unplug, not its random draws, is under test
        camera=False,
        database="sqlite:///:memory:",
        port=0,
        status=False,
        out=io.StringIO(),
    )
    await run_demo(options, stop, on_ready=check)
    assert seen["alerts"] == [("device_offline", "shoe-1")]
    assert seen["paused"] is True
    assert seen["offline"] in seen["resolved"]  # type: ignore[operator]
