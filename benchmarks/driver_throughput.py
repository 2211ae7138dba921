"""How many cards/s one driver process relays from simulated shoes to the broker, and how late.

Layout: this process runs the simulated tables (real ptys) and an MQTT consumer;
ONE separate ``studio drivers run --config`` process drives every device. The
simulator stamps each card frame when its last byte is written to the pty and
the consumer stamps its arrival from the broker (same machine, same monotonic
clock), so the latency is serial write -> MQTT receipt, driver and broker included.

Two phases:
  1. throughput: every table deals as fast as the pipeline takes it (at most
     --window cards in flight per table); prints sustained cards/s and latency.
  2. latency: a paced load (--rate cards/s over all tables); prints p50/p99.

    .venv/bin/python benchmarks/driver_throughput.py --broker mqtt://127.0.0.1:1883
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hwsim.cli import config_toml
from hwsim.table import SimTable, Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics
from studio.contract.topics import table_of


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Probe:
    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.received: dict[str, int] = dict.fromkeys(sim.tables, 0)
        self.latencies: list[float] = []
        self.seen: set[tuple[str, int]] = set()

    async def consume(self, bus: MessageBus) -> None:
        async with bus.subscribe(Topics("+").shoe_cards, ShoeCard) as sub:
            async for message in sub:
                now = time.perf_counter()
                table = table_of(message.topic)
                if table not in self.received:
                    continue  # another table on a shared broker
                key = (table, message.payload.seq)
                if key in self.seen:
                    continue
                self.seen.add(key)
                self.received[table] += 1
                times = self.sim.table(table).shoe.write_times
                written = times.pop(message.payload.seq, None) if times is not None else None
                if written is not None:
                    self.latencies.append(now - written)

    def reset(self) -> None:
        self.latencies = []


def deal_one(table: SimTable) -> int:
    if table.cutcard.cut_out or table.shoe.remaining < 2:
        table.new_shoe()
    return len(table.deal())


async def throughput(probe: Probe, cards: int, window: int) -> tuple[int, float]:
    per_table = cards // len(probe.sim.tables)
    start_counts = dict(probe.received)

    async def run(table: SimTable) -> None:
        dealt = 0
        while dealt < per_table:
            while dealt - (probe.received[table.id] - start_counts[table.id]) >= window:
                await asyncio.sleep(0.001)
            dealt += deal_one(table)
            await asyncio.sleep(0)
        while probe.received[table.id] - start_counts[table.id] < dealt:
            await asyncio.sleep(0.005)

    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for table in probe.sim.tables.values():
            group.create_task(run(table))
    elapsed = time.perf_counter() - started
    total = sum(probe.received.values()) - sum(start_counts.values())
    return total, elapsed


async def paced(probe: Probe, cards: int, rate: float) -> None:
    tables = list(probe.sim.tables.values())
    target = sum(probe.received.values())
    interval = 1.0 / rate
    next_at = time.perf_counter()
    for i in range(cards):
        target += deal_one(tables[i % len(tables)])
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    async with asyncio.timeout(60):
        while sum(probe.received.values()) < target:
            await asyncio.sleep(0.01)


def report(name: str, latencies: list[float]) -> str:
    ms = [x * 1000 for x in latencies]
    return (
        f"{name}: n={len(ms)} p50={percentile(ms, 0.50):.2f} ms p99={percentile(ms, 0.99):.2f} ms "
        f"mean={statistics.fmean(ms):.2f} ms max={max(ms):.2f} ms"
    )


async def main(args: argparse.Namespace) -> dict[str, object]:
    broker = BrokerSettings(url=args.broker, client_id_prefix=f"bench{os.getpid()}")
    workdir = Path(tempfile.mkdtemp(prefix="driver-bench-"))
    ids = [f"bench{os.getpid()}-{i}" for i in range(args.tables)]
    async with Simulator(
        ids, seed=1, base_dir=workdir, record_write_times=True, heartbeat_interval=0.5
    ) as sim:
        config = workdir / "studio.toml"
        config.write_text(config_toml(sim.studio_config(args.broker, heartbeat_timeout=10.0)))
        studio = Path(sys.executable).parent / "studio"
        driver = await asyncio.create_subprocess_exec(
            str(studio), "drivers", "run", "--config", str(config), "--state-dir", str(workdir / "state"),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        probe = Probe(sim)
        try:
            async with MessageBus(broker, "bench-consumer") as bus, asyncio.TaskGroup() as group:
                consumer = group.create_task(probe.consume(bus))
                await bus.wait_connected()
                # Warm up: wait until every shoe driver relays a card.
                async with asyncio.timeout(60):
                    while min(probe.received.values()) == 0:
                        for table in sim.tables.values():
                            if probe.received[table.id] == 0:
                                deal_one(table)
                        await asyncio.sleep(0.3)
                probe.reset()
                total, elapsed = await throughput(probe, args.cards, args.window)
                result: dict[str, object] = {
                    "tables": args.tables,
                    "cards": total,
                    "seconds": round(elapsed, 2),
                    "cards_per_s": round(total / elapsed, 1),
                }
                print(
                    f"throughput: {total} cards over {args.tables} tables in {elapsed:.2f}s = {total / elapsed:.0f} cards/s"
                )
                print(report("  latency under full load", probe.latencies))
                result["saturated_p50_ms"] = round(percentile(probe.latencies, 0.5) * 1000, 2)
                result["saturated_p99_ms"] = round(percentile(probe.latencies, 0.99) * 1000, 2)
                probe.reset()
                await paced(probe, args.latency_cards, args.rate)
                print(report(f"latency at {args.rate:.0f} cards/s", probe.latencies))
                result["paced_rate"] = args.rate
                result["paced_p50_ms"] = round(percentile(probe.latencies, 0.5) * 1000, 2)
                result["paced_p99_ms"] = round(percentile(probe.latencies, 0.99) * 1000, 2)
                consumer.cancel()
        finally:
            if driver.returncode is None:
                driver.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(driver.wait(), 20)
                except TimeoutError:
                    driver.kill()
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--broker", default="mqtt://127.0.0.1:1883")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--cards", type=int, default=8000, help="cards in the throughput phase")
    parser.add_argument("--window", type=int, default=64, help="max cards in flight per table")
    parser.add_argument("--rate", type=float, default=100.0, help="cards/s in the latency phase")
    parser.add_argument("--latency-cards", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="also print the result as JSON")
    arguments = parser.parse_args()
    outcome = asyncio.run(main(arguments))
    if arguments.json:
        print(json.dumps(outcome))
