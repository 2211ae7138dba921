"""Soak: 10,000 cards across 8 simulated tables through one driver process, zero loss.

Each table deals through several shoes (shuffler count + census, eject, shoe
load, cut card, new shoe) while one DeviceFeed per table consumes. Dealing is
paced only by the consumers (at most WINDOW cards in flight per table), never
by timers, so the test is as fast as the machine and the broker allow.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from drivers.consumer import DeviceFeed
from drivers.runner import DriverSet
from hwsim.table import SimTable, Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DeviceEvent, ShoeCard, Topics

TABLES = 8
TOTAL = 10_000
WINDOW = 100


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_soak_10000_cards_8_tables_zero_loss(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    ids = [f"{table_id}-{i}" for i in range(TABLES)]
    per_table = TOTAL // TABLES
    async with Simulator(ids, seed=42, base_dir=tmp_path, heartbeat_interval=0.5) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=10.0)
        async with MessageBus(broker, "soak") as bus, DriverSet(config, broker=broker) as drivers:
            await bus.wait_connected()
            await drivers.wait_online(60)
            received: dict[str, list[ShoeCard]] = {t: [] for t in ids}
            dealt: dict[str, list[str]] = {t: [] for t in ids}
            shoes: dict[str, int] = dict.fromkeys(ids, 1)

            async def run_table(table: SimTable) -> None:
                topics = Topics(table.id)
                models = {topics.shoe_cards: ShoeCard, topics.shoe_events: DeviceEvent}
                async with DeviceFeed(bus, topics, "shoe-1", models) as feed:  # type: ignore[arg-type]

                    async def consume() -> None:
                        async for event in feed:
                            if isinstance(event, ShoeCard):
                                received[table.id].append(event)

                    consumer = asyncio.create_task(consume())
                    while len(dealt[table.id]) < per_table:
                        if table.cutcard.cut_out or table.shoe.remaining == 0:
                            table.new_shoe()
                            shoes[table.id] += 1
                        dealt[table.id] += [c.code for c in table.deal()][
                            : per_table - len(dealt[table.id])
                        ]
                        while len(dealt[table.id]) - len(received[table.id]) > WINDOW:
                            await asyncio.sleep(0.005)
                        await asyncio.sleep(0)
                    async with asyncio.timeout(120):
                        while len(received[table.id]) < per_table:
                            await asyncio.sleep(0.02)
                    consumer.cancel()

            started = time.perf_counter()
            async with asyncio.TaskGroup() as group:
                for table_id_ in ids:
                    group.create_task(run_table(sim.table(table_id_)))
            elapsed = time.perf_counter() - started
            print(
                f"soak: {TOTAL} cards, {TABLES} tables, {elapsed:.1f}s, {TOTAL / elapsed:.0f} cards/s"
            )
            for t in ids:
                cards = sorted(received[t], key=lambda c: c.seq)
                assert [c.card for c in cards] == dealt[t]
                assert len({c.seq for c in cards}) == len(cards) == per_table
                assert shoes[t] >= 3  # the soak really went through several shoes
            assert sum(len(v) for v in received.values()) == TOTAL
            lost = sum(d.stats["frames_lost"] for d in drivers.drivers)
            assert lost == 0
