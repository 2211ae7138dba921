"""The demo's cameras: every table, the 7-seat clubhouse included, is cross-checked by one.

The clubhouse table's camera sees the wide layout, which gives each of its seven hands
six card slots side by side; its rounds are two-source (not single-source), and every
card the shoe deals is confirmed by the camera.
"""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hwsim.camera.virtual import TIGHT_SLOTS, camera_setup
from studio.bus.embedded import free_port
from studio.controller.crosscheck import zone_of
from studio.demo import DemoOptions, run_demo
from studio.demo.run import TABLE_NAMES, DemoHandle, demo_tables
from studio.rules.ruleset import ruleset_from_spec


def test_every_demo_table_has_a_camera_unless_cameras_are_off() -> None:
    tables = demo_tables(4, 0.6, camera=True)
    assert [t.id for t in tables] == TABLE_NAMES
    assert [t.single_source for t in tables] == [False] * 4
    assert [t.single_source for t in demo_tables(4, 0.6, camera=False)] == [True] * 4


def test_the_clubhouse_camera_has_room_for_every_hand() -> None:
    seats = ruleset_from_spec({"preset": "clubhouse"}).table.seats
    assert seats == 7
    layout, slots, size = camera_setup(seats)
    assert slots is TIGHT_SLOTS and size == (1600, 900)
    for seat in range(1, seats + 1):
        assert len(slots.centres(layout, f"seat:{seat}")) == 6
        assert len(slots.centres(layout, f"seat:{seat}:h2")) == 4
    assert min(slots.gap_mm()) >= 12


def _checked_by_camera(record: dict[str, Any]) -> tuple[int, int, int]:
    """Cards dealt, cards the camera read and matched, and the most cards in one seat zone.

    Every card dealt (burn cards aside) must have been confirmed by the camera.
    """
    events = [e for e in record["events"] if e["kind"] == "out.round_event"]
    zones = {
        e["data"]["index"]: zone_of(e["data"]["target"])
        for e in events
        if e["type"] == "card_dealt" and e["data"]["target"].get("kind") != "burn"
    }
    confirmed = {
        e["data"]["index"]: e["data"]["camera"] for e in events if e["type"] == "card_confirmed"
    }
    assert set(confirmed) == set(zones), (
        record["summary"]["round_id"],
        set(zones) ^ set(confirmed),
    )
    assert set(confirmed.values()) <= {"match", "camera_unreadable"}
    seat_cards = Counter(z for z in zones.values() if z.startswith("seat:"))
    longest = max(seat_cards.values(), default=0)
    return len(zones), sum(v == "match" for v in confirmed.values()), longest


@pytest.mark.timeout(300)
async def test_clubhouse_rounds_are_cross_checked_by_its_camera(tmp_path: Path) -> None:
    stop = asyncio.Event()
    handles: list[DemoHandle] = []

    async def ready(handle: DemoHandle) -> None:
        handles.append(handle)

    options = DemoOptions(
        tables=1,  # the clubhouse table alone
        pace=0.05,
        seed=5,
        faults=False,
        # A camera miss (a hand that outgrows its slots) pauses the table; let it go on.
        auto_resolve=2.0,
        port=free_port(),
        database=f"sqlite:///{tmp_path}/clubhouse.db",
        status=False,
        out=io.StringIO(),
    )
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready), name="demo")
    try:
        async with asyncio.timeout(240):
            while not handles:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.1)
            service = handles[0].service
            assert list(service.tables) == ["clubhouse"]
            checked: dict[str, tuple[int, int, int]] = {}
            # Three rounds without alerts, one of them with a hand of three cards or more
            # (the third card is the one the old 7-seat layout had no slot for).
            while len(checked) < 3 or max(c[2] for c in checked.values()) < 3:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.25)
                # Empty until the first round opens: a slow machine takes a while to get there.
                rounds = await service.rounds_search(table="clubhouse")
                assert not any(r["single_source"] for r in rounds)
                for summary in rounds:
                    if summary["status"] != "settled" or summary["alerts"]:
                        continue
                    if summary["round_id"] not in checked:
                        record = await service.round_record(summary["round_id"])
                        assert record["summary"]["single_source"] is False
                        checked[summary["round_id"]] = _checked_by_camera(record)
        dealt = sum(c[0] for c in checked.values())
        matched = sum(c[1] for c in checked.values())
        assert matched >= 0.9 * dealt, (matched, dealt)
    finally:
        stop.set()
        await runner
