"""The demo's simulated tables as its docs and the game's rules describe them: random faults
strike only while a table is dealing, and the cut card sits where the rules put it (about
half way in the 8-deck clubhouse shoe, none in the classic6 shoe reshuffled every round).

Before, the demo's fault injector had no notion of "dealing": a fault drawn while betting
was open pulled cards before betting closed (``game_before_time`` alerts, not the misread
or double pull the docs show), the simulated cut card came out at 75 % of every shoe, and
an in-memory database left a ``:memory:-devices`` folder wherever the demo was started.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from studio.demo import DemoOptions, run_demo
from studio.demo.run import DemoHandle


async def _until(condition: Callable[[], bool], timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


@pytest.mark.timeout(180)
async def test_faults_strike_while_dealing_and_the_cut_card_is_where_the_rules_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    stop = asyncio.Event()
    seen: dict[str, object] = {}

    async def check(handle: DemoHandle) -> None:
        try:
            tables = handle.service.tables
            clubhouse, classic6 = handle.sims["clubhouse"], handle.sims["classic6"]
            eligible = handle.faults.eligible
            assert eligible is not None
            await _until(lambda: tables["clubhouse"].phase == "betting")
            seen["while betting"] = eligible("clubhouse")
            try:
                await _until(
                    lambda: (
                        tables["clubhouse"].phase == "dealing" and not tables["clubhouse"].paused
                    )
                )
            except TimeoutError:
                # Where the table stood: a paused table is a fault, a slow one is not.
                summary = tables["clubhouse"].summary()
                alerts = handle.service.alerts(table="clubhouse", reveal=True)
                pytest.fail(f"clubhouse never dealt unpaused: {summary}; alerts: {alerts}")
            seen["while dealing"] = eligible("clubhouse")
            await _until(lambda: bool(classic6.shoe.shoe_id))
            seen["cut"] = (clubhouse.cut_index, len(clubhouse.shoe.cards), classic6.cut_index)
        finally:
            stop.set()

    options = DemoOptions(
        tables=2,  # clubhouse and classic6
        pace=0.1,
        seed=5,
        fault_rate=0.0,  # the injector, not its random draws, is under test
        camera=False,
        database="sqlite:///:memory:",
        port=0,  # a free one, bound by the demo itself
        status=False,
        out=io.StringIO(),
    )
    await run_demo(options, stop, on_ready=check)
    assert seen["while betting"] is False
    assert seen["while dealing"] is True
    assert seen["cut"] == (8 * 52 // 2, 8 * 52, None)
    # An in-memory database outlives no run: nothing is kept beside it in the working folder.
    assert list(tmp_path.iterdir()) == []
