"""Eight tables at once in one controller: every table deals and settles independently."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from studio.bus.embedded import free_port
from studio.controller import ControllerService
from studio.demo import DemoOptions, run_demo
from studio.demo.run import DemoHandle


async def settled_counts(service: ControllerService) -> dict[str, int]:
    return {
        t: len([r for r in await service.rounds_search(table=t) if r["status"] == "settled"])
        for t in service.tables
    }


@pytest.mark.timeout(400)
async def test_eight_tables_settle_rounds_independently(tmp_path: Path) -> None:
    stop = asyncio.Event()
    handles: list[DemoHandle] = []

    async def ready(handle: DemoHandle) -> None:
        handles.append(handle)

    options = DemoOptions(
        tables=8,
        pace=0.05,
        seed=8,
        faults=False,
        camera=False,  # eight tables on two cores: the camera pipeline has its own tests
        port=free_port(),
        database=f"sqlite:///{tmp_path}/eight.db",
        status=False,
        out=io.StringIO(),
    )
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready), name="demo")
    progress: dict[str, object] = {}
    try:
        async with asyncio.timeout(300):
            while not handles:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.1)
            service = handles[0].service
            assert len(service.tables) == 8
            while min((counts := await settled_counts(service)).values()) < 2:
                progress = {
                    t: (c.phase, c.paused, c.round_no, counts[t]) for t, c in service.tables.items()
                }
                assert not runner.done(), runner.exception()
                await asyncio.sleep(1)
    except TimeoutError:
        stop.set()
        raise AssertionError(f"tables stuck: {progress}") from None
    # A manager pause on one table leaves the other seven dealing.
    paused = "clubhouse"
    await service.pause(paused, user="m", reason="test")
    before = {t: c.round_no for t, c in service.tables.items()}
    others = [t for t in service.tables if t != paused]
    twin = f"{paused}-2"  # the other table of the paused one's kind (its rounds as long)
    assert twin in others

    def played_on(table: str) -> bool:
        return service.tables[table].round_no >= before[table] + 2

    # For 15 s at most, or until five of the others, its twin among them, played two more
    # rounds (a whole round each, start to end: long enough for the paused table to have
    # ended its own, and opened another, had it not been paused).
    loop = asyncio.get_running_loop()
    until = loop.time() + 15
    while loop.time() < until and not (played_on(twin) and sum(map(played_on, others)) >= 5):
        await asyncio.sleep(0.2)
    after = {t: c.round_no for t, c in service.tables.items()}
    assert after[paused] == before[paused]
    assert sum(after[t] > before[t] for t in after if t != paused) >= 5
    chain = await service.log.verify()
    stop.set()
    result = await runner
    assert chain.ok
    assert set(result["rounds"]) == set(service.tables)
