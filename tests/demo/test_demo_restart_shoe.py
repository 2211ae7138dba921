"""A demo killed while a table waited for a shoe its simulator had just loaded: the next
run's simulator starts with no shoe, but the table, once its alerts were resolved, opened
a round on the old run's shoe; every deal then failed ("shoe-1 has no shoe loaded") and a
fault injected on it ended the whole demo (a crash-consistency review, 1 in 48 kills)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.demo.faults import FaultInjector
from studio.demo.run import restart_tables
from studio.errors import DeviceError
from studio.store import Database, EventLog
from studio.streams import Fanout

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
CENSUS = {rank: 32 for rank in "A23456789TJQK"}


async def test_a_table_waiting_on_the_last_runs_shoe_has_it_changed(tmp_path: Path) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        await db.create_all()
        now = T0
        config = StudioConfig(tables=[TableSettings(id="t1", single_source=True)])
        service = ControllerService(
            config, None, EventLog(db), Fanout(None), clock=lambda: now, timers=False
        )
        async with service:
            # A card out of the blue pauses the table (as the reviewer's integrity alert did).
            card = {"device": "shoe", "seq": 1, "ts": T0.isoformat(), "card": "QH", "shoe": "S0"}
            await service.submit("t1", "shoe.card", card)
            assert service.tables["t1"].paused
            shuffled = {"event": "shuffle_complete", "data": {"count": 416, "census": CENSUS}}
            await service.submit(
                "t1",
                "shuffler.event",
                {"device": "shuf", "seq": 1, "ts": T0.isoformat(), **shuffled},
            )
            now += timedelta(seconds=0.1)
            loaded = {"event": "shoe_loaded", "data": {"shoe": "S1"}}
            await service.submit(
                "t1", "shoe.event", {"device": "shoe", "seq": 2, "ts": now.isoformat(), **loaded}
            )
            table = service.tables["t1"]
            assert table.phase == "waiting_shoe" and table.shoe.shoe_id == "S1"
            assert await restart_tables(service) == []
            assert service.tables["t1"].phase == "shoe_change"


async def test_a_table_waiting_for_its_first_shoe_is_left_as_it_is(tmp_path: Path) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        await db.create_all()
        config = StudioConfig(tables=[TableSettings(id="t1", single_source=True)])
        service = ControllerService(
            config, None, EventLog(db), Fanout(None), clock=lambda: T0, timers=False
        )
        async with service:
            await restart_tables(service)
            assert service.tables["t1"].phase == "waiting_shoe"


class _NoShoe:
    id = "t1"

    async def fault(self, device: str, fault: str) -> None:
        raise DeviceError(f"{device} has no shoe loaded")


async def test_a_fault_the_device_cannot_take_does_not_end_the_demo(
    caplog: pytest.LogCaptureFixture,
) -> None:
    injector = FaultInjector([_NoShoe()], rate=1.0, seed=1, interval=0.0)  # type: ignore[list-item]
    task: Any = None
    import asyncio

    task = asyncio.create_task(injector.run(), name="faults")
    try:
        async with asyncio.timeout(5):
            while sum(injector.injected.values()) < 3:
                assert not task.done(), task.exception()
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
    assert "not injected: shoe has no shoe loaded" in caplog.text
