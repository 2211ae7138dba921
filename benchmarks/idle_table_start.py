"""Start-up with an idle table: what a start walks of the hash chain when one table stopped
dealing long ago (its old checkpoint and last outputs far back) and another deals on.

Plays ``--idle-rounds`` scripted rounds at table ``idle`` (checkpointed), then ``--rounds`` at
table ``crash`` through a controller on SQLite, then times three starts' rebuilds (``recover``,
as `controller_recovery.py` times a start) and says how many records each walked
and from which record. With ``--late`` the run checkpoints the idle table once more after 80%
of the other table's inputs, as the running controller's records trigger may: a checkpoint
close to the head whose ``indexed`` (0: that run's start re-indexed nothing) lies below the
idle table's outputs.

    .venv/bin/python benchmarks/idle_table_start.py [--rounds 300] [--idle-rounds 2] [--late]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "controller"))
from crash_harness import TABLE, controller, feed, generate

from studio.store import Database, EventLog
from studio.store.eventlog import StartChain

IDLE = TABLE.model_copy(update={"id": "idle"})


async def main(rounds: int, idle_rounds: int, late: bool) -> None:
    inputs, _ = generate(rounds, seed=7)
    idle, _ = generate(idle_rounds, seed=8)
    clock = {"t": datetime.fromisoformat(inputs[0]["ts"])}
    with tempfile.TemporaryDirectory() as folder:
        async with Database(f"sqlite:///{folder}/studio.db") as db:
            log = EventLog(db)
            print(f"playing {len(idle):,} inputs at idle, {len(inputs):,} at crash ...", flush=True)
            async with controller(log, clock, also=[IDLE]) as first:
                await feed(first, idle, clock, table="idle")
                await first.checkpoint("idle")
                cut = len(inputs) * 4 // 5 if late else len(inputs)
                await feed(first, inputs[:cut], clock, table="crash")
                if late:
                    await first.checkpoint("idle")
                await feed(first, inputs[cut:], clock, table="crash")
            records = (await log.read(descending=True, limit=1))[0].id
            print(f"log: {records:,} records")
            for n in range(1, 4):
                service = controller(log, clock, also=[IDLE])
                service._start_chain = chain = StartChain(log)  # (kept to see what it walked)
                started = time.perf_counter()
                await service.recover()
                seconds = time.perf_counter() - started
                print(
                    f"start {n}: {seconds:.2f} s, walked {chain.walked:,} records from record "
                    f"{chain.first}, {service.stats.checkpoints} "
                    "checkpoint(s) saved"
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--idle-rounds", type=int, default=2)
    parser.add_argument("--late", action="store_true", help="checkpoint idle again late in the run")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.idle_rounds, args.late))
