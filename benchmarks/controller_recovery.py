"""Start-up time of the controller: replaying a table's whole log against starting from its
checkpoint, and what taking a checkpoint costs.

Plays ``--rounds`` scripted rounds (about 34 inputs each) (the crash-recovery test's script: bets, cards, camera
sightings, decisions, timers, mismatches and resolutions) through a controller on SQLite,
takes a checkpoint before the last ``--tail`` inputs, plays those, then times:

- a start that replays the whole log (checkpoints removed),
- a checkpoint taken in the background (rebuild, pickle, save) and the longest the event
  loop was held meanwhile,
- a start from the checkpoint with the tail to replay, and one with none;
- indexing the log's game commands as the first start after an upgrade from a version
  without the index does (its rows removed first).

    .venv/bin/python benchmarks/controller_recovery.py [--rounds 1000] [--tail 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "controller"))
from bench_common import timed
from crash_harness import controller as harness_controller
from crash_harness import feed, generate

from studio.controller import ControllerService
from studio.controller.command_index import catch_up
from studio.store import Database, EventLog, GameCommands
from studio.store.checkpoints import checkpoints
from studio.store.game_commands import game_commands, game_commands_through


def controller(log: EventLog, clock: dict[str, datetime]) -> ControllerService:
    # Checkpoints only when asked: neither trigger (inputs, records behind) in the background.
    return harness_controller(log, clock, checkpoint_inputs=10**9, checkpoint_records=10**9)


async def play(
    service: ControllerService, inputs: list[dict[str, Any]], clock: dict[str, datetime]
) -> None:
    async def progress(n: int) -> None:
        if n % 2000 == 0:
            print(f"  played {n:,} of {len(inputs):,} inputs", flush=True)

    await feed(service, inputs, clock, after_each=progress)


async def timed_start(log: EventLog, clock: dict[str, datetime]) -> tuple[float, int]:
    started = time.perf_counter()
    replayed = await controller(log, clock).recover()
    return time.perf_counter() - started, replayed


async def main(rounds: int, tail: int) -> None:
    print(f"generating {rounds:,} rounds ...", flush=True)
    inputs, _ = generate(rounds, seed=7)
    head, rest = inputs[:-tail], inputs[-tail:]
    clock = {"t": datetime.fromisoformat(inputs[0]["ts"])}
    with tempfile.TemporaryDirectory() as folder:
        async with Database(f"sqlite:///{folder}/studio.db") as db:
            log = EventLog(db)
            print(f"playing {len(head):,} inputs through the controller ...", flush=True)
            service = controller(log, clock)
            async with service:
                await play(service, head, clock)
                _, seconds, held = await timed(service.checkpoint("crash"))
                (record,) = await log.read(kinds=["controller.checkpoint"])
                print(
                    f"first checkpoint (the whole log replayed): {seconds * 1000:.0f} ms "
                    f"({record.payload['bytes']:,} bytes), event loop held up to "
                    f"{held * 1000:.0f} ms"
                )
                print(f"playing a tail of {len(rest):,} inputs ...", flush=True)
                await play(service, rest, clock)
            records = len(await log.read())
            with_tail, tail_replayed = await timed_start(log, clock)
            async with controller(log, clock) as again:  # one at the log's end
                _, seconds, held = await timed(again.checkpoint("crash"))
            print(
                f"next checkpoint (from the first, {tail_replayed + 1:,} inputs after it): "
                f"{seconds * 1000:.0f} ms, event loop held up to {held * 1000:.0f} ms"
            )
            none, none_replayed = await timed_start(log, clock)
            async with db.engine.begin() as conn:
                await conn.execute(sa.delete(checkpoints))
            whole, replayed = await timed_start(log, clock)
            print(f"log: {records:,} records, {replayed:,} of them inputs")
            print(f"start, whole log replayed: {whole:.2f} s ({replayed / whole:,.0f} inputs/s)")
            print(
                f"start from the checkpoint, {tail_replayed:,} inputs after it: {with_tail:.2f} s"
            )
            print(f"start from the checkpoint, {none_replayed:,} inputs after it: {none:.2f} s")
            async with db.engine.begin() as conn:
                await conn.execute(sa.delete(game_commands))
                await conn.execute(sa.delete(game_commands_through))
            started = time.perf_counter()
            indexed = await catch_up(log, GameCommands(db))
            print(
                f"indexing the log's {indexed:,} game commands (a start after the upgrade): "
                f"{time.perf_counter() - started:.2f} s"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--tail", type=int, default=1000, help="inputs after the checkpoint")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.tail))
