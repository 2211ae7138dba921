"""Timing of the certification math: every exact computation, and simulated rounds/s per core.

Run: ``.venv/bin/python benchmarks/certification_timing.py [--rounds 20000] [--presets ...]``

Caches are cleared before each exact computation, so every figure is a cold
computation. The engine's basic strategy is built by the rules engine
(``studio.rules.strategy``); its one-off construction time is reported apart
from the time of evaluating it exactly.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from studio.certification import dealer, main_game, sidebets
from studio.certification.main_game import analyse
from studio.certification.rulesets import engine_policy, game_rules, side_bet_result
from studio.certification.simulate import run_simulation
from studio.rules import strategy
from studio.rules.ruleset import DecisionMode, preset


def _clear() -> None:
    dealer.dealer_graph.cache_clear()
    main_game._hand_graph.cache_clear()
    main_game._total.cache_clear()
    main_game._add.cache_clear()
    sidebets._buster_probabilities.cache_clear()


T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float, float]:
    """Result, wall seconds, CPU seconds of this process."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20_000, help="simulated rounds per run")
    parser.add_argument("--presets", nargs="*", default=["clubhouse", "classic6", "majority_speed"])
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"python {sys.version.split()[0]}, {cores} core(s), load {os.getloadavg()[0]:.2f}")
    print()
    print(f"{'computation':<58}{'result':>14}{'wall s':>9}{'CPU s':>9}")
    for name in args.presets:
        rules = preset(name)
        for kind, sb in rules.side_bets.items():
            _clear()
            res, wall, cpu = timed(lambda: side_bet_result(kind, sb.paytable, rules))  # noqa: B023
            label = f"{name}: side bet {res.name} ({rules.shoe.decks} decks)"
            print(f"{label:<58}{float(res.rtp) * 100:>13.4f}%{wall:>9.3f}{cpu:>9.3f}")
        g = game_rules(rules)
        _clear()
        cd, wall, cpu = timed(lambda: analyse(g))  # noqa: B023
        label = f"{name}: main game, optimal CD ({rules.shoe.decks} decks)"
        print(f"{label:<58}{cd.house_edge * 100:>11.4f}% HE{wall:>9.3f}{cpu:>9.3f}")
        strategy._strategy_for.cache_clear()
        t0 = time.perf_counter()
        policy = engine_policy(rules)
        strategy.strategy_for(rules)
        build = time.perf_counter() - t0
        # the engine builds its two-card decisions lazily: time a first evaluation, then a warm one
        _clear()
        t0 = time.perf_counter()
        analyse(g, policy)
        first = time.perf_counter() - t0
        _clear()
        td, warm, cpu = timed(lambda: analyse(g, policy))  # noqa: B023
        label = f"{name}: main game, engine basic strategy (evaluation)"
        print(f"{label:<58}{td.house_edge * 100:>11.4f}% HE{warm:>9.3f}{cpu:>9.3f}")
        label = f"{name}:   engine strategy construction (rules engine)"
        print(f"{label:<58}{'':>14}{build + first - warm:>9.3f}")
        if rules.table.decision_mode is DecisionMode.MAJORITY_RULES:
            _clear()
            nc, wall, cpu = timed(lambda: analyse(g, policy, consent=False))  # noqa: B023
            label = f"{name}: main game, engine strategy without consent"
            print(f"{label:<58}{nc.house_edge * 100:>11.4f}% HE{wall:>9.3f}{cpu:>9.3f}")
    resplit = preset("majority_speed").with_overrides({"split": {"max_hands": 4}})
    _clear()
    r4, wall, cpu = timed(lambda: analyse(game_rules(resplit)))
    label = "majority_speed, resplit to 4 hands: main game, optimal CD"
    print(f"{label:<58}{r4.house_edge * 100:>11.4f}% HE{wall:>9.3f}{cpu:>9.3f}")
    print()
    rules = preset(args.presets[-1])
    strategy.strategy_for(rules)
    for workers in sorted({1, cores}):
        sim = run_simulation(rules, args.rounds, workers=workers, seed=1, progress=False)
        print(
            f"simulation {rules.name}, {sim.rounds:,} rounds, {workers} worker(s): "
            f"{sim.seconds:.1f} s wall, {sim.rounds / sim.seconds:,.0f} rounds/s total, "
            f"{sim.rounds_per_second_per_core:,.0f} rounds/s per core (CPU time), "
            f"RTP {sim.rtp * 100:.3f}% ± {sim.z * sim.std_error * 100:.3f}%"
        )


if __name__ == "__main__":
    mp.freeze_support()
    main()
