"""What each kind of input costs the controller end to end: applied, logged with its
outputs (and, for a game command, its id looked up and indexed), on a real database.

Plays ``--rounds`` scripted rounds (the crash-recovery test's script) through a controller
and prints the median and mean time of a submit per input kind.

    .venv/bin/python benchmarks/input_cost.py [--rounds 150] [--database URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "controller"))
from crash_harness import controller, generate

from studio.errors import StudioError
from studio.store import Database, EventLog


async def main(rounds: int, url: str | None) -> None:
    inputs, _ = generate(rounds, seed=7)
    clock = {"t": datetime.fromisoformat(inputs[0]["ts"])}
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        async with Database(url or f"sqlite:///{folder}/studio.db") as db:
            async with controller(EventLog(db), clock, checkpoint_inputs=10**9) as service:
                for item in inputs:
                    clock["t"] = datetime.fromisoformat(item["ts"])
                    started = time.perf_counter()
                    # A manager's request of the script may be refused.
                    with contextlib.suppress(StudioError):
                        await service.submit("crash", item["kind"], item["data"])
                    times.setdefault(item["kind"], []).append(time.perf_counter() - started)
    print(
        f"{len(inputs):,} inputs of {rounds} rounds on {'the database given' if url else 'SQLite'}"
    )
    for kind, spent in sorted(times.items(), key=lambda kv: -len(kv[1])):
        print(
            f"{kind:18} {len(spent):6,}  median {statistics.median(spent) * 1000:.2f} ms"
            f"  mean {statistics.mean(spent) * 1000:.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--database", help="a database URL (default: SQLite in a temporary folder)")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.database))
