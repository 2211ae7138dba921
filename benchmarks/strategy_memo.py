"""The basic strategy's memo (the rules engine's default decisions: a timeout, a bet behind,
an automatic split follow it): what every two-card decision of a rule set costs the first
time it occurs, and the memory the memo holds once all have.

    .venv/bin/python benchmarks/strategy_memo.py [--presets clubhouse classic6 majority_speed]

Each preset runs in a fresh process, so that the memo starts empty.
"""

from __future__ import annotations

import argparse
import gc
import random
import subprocess
import sys
import time
import tracemalloc

from studio.rules.ruleset import ruleset_from_spec
from studio.rules.strategy import Action, strategy_for


def measure(preset: str) -> None:
    strategy = strategy_for(ruleset_from_spec(preset))
    keys = [(a, b, up) for up in range(1, 11) for a in range(1, 11) for b in range(a, 11)]
    random.Random(1).shuffle(keys)  # in the order a studio might meet them
    spent = []
    started = time.perf_counter()
    for a, b, up in keys:
        legal = [Action.STAND, Action.HIT, Action.DOUBLE] + ([Action.SPLIT] if a == b else [])
        t = time.perf_counter()
        strategy.two_card_values(a + b, 1 in (a, b), up, legal, a == b)
        spent.append(time.perf_counter() - t)
    total = time.perf_counter() - started
    slowest = ", ".join(f"{s * 1000:.0f}" for s in sorted(spent)[-5:])
    print(f"{preset}: {len(keys)} decisions {total:.2f} s, slowest first ones {slowest} ms")
    # The memory, apart: tracemalloc slows the computation several times.
    tracemalloc.start()
    fresh = type(strategy)(strategy.params)
    for a, b, up in keys:
        legal = [Action.STAND, Action.HIT, Action.DOUBLE] + ([Action.SPLIT] if a == b else [])
        fresh.two_card_values(a + b, 1 in (a, b), up, legal, a == b)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    entries = sum(len(c._hs) for c in fresh._composition.values())
    print(f"{preset}: memo {entries:,} entries, {held / 1e6:.1f} MB held")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=["clubhouse", "classic6", "majority_speed"])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        measure(args.one)
    else:
        for preset in args.presets:
            subprocess.run([sys.executable, __file__, "--one", preset], check=True)
