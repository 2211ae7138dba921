"""Buster Blackjack's return as the rules engine deals it, against the exact figure.

One box on ``majority_speed`` with a 10-unit main bet and a 10-unit Buster bet, playing the
engine's best strategy (as ``studio rtp --simulate``), each round from a full, freshly
shuffled shoe: the situation of the exact 93.8659% (GAME-FACTS 93.866%). A lone box is
where it matters whether the dealer plays out when every hand is bust: compare
``--logic 2`` (she stopped; the bet lost) with the current logic.

    .venv/bin/python benchmarks/buster_through_engine.py [--rounds 200000] [--seed 8]
        [--logic 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from random import Random

from studio.certification.simulate import PLAYER, SEAT, STAKE, _Shoe, play_until_card
from studio.rules.round import LOGIC, CardFor, Round, RoundConfig
from studio.rules.ruleset import preset

CHUNK = 5_000
BUSTER = "buster_blackjack"


def chunk(job: tuple[int, int, int]) -> tuple[float, float]:
    """Sum and sum of squares of the Buster bet's return per unit over ``n`` rounds."""
    logic, seed, n = job
    rules = preset("majority_speed")
    shoe = _Shoe(rules.shoe.decks, Random(seed))
    total = squares = 0.0
    for _ in range(n):
        shoe.new_round()
        rnd = Round(rules, RoundConfig(shoe_cards_dealt=0, new_shoe=True), logic=logic)
        rnd.open_betting()
        while rnd.next_card().kind is CardFor.BURN:
            rnd.deal(shoe.draw())
        rnd.place_wager(SEAT, PLAYER, STAKE, {BUSTER: str(STAKE)}, auto_consent=True)
        rnd.close_betting()
        while play_until_card(rnd):
            rnd.deal(shoe.draw())
        lines = [line for w in rnd.settle().wagers for line in w.lines if line.bet == BUSTER]
        back = float(sum(line.payout for line in lines)) / float(STAKE)
        total += back
        squares += back * back
    return total, squares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--logic", type=int, default=LOGIC, help="the engine logic to deal by")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(args.logic, args.seed * 100_003 + i, CHUNK) for i in range(args.rounds // CHUNK)]
    with ProcessPoolExecutor(args.workers) as pool:
        parts = list(pool.map(chunk, jobs))
    n = CHUNK * len(jobs)
    mean = sum(p[0] for p in parts) / n
    variance = sum(p[1] for p in parts) / n - mean * mean
    half = 1.96 * math.sqrt(variance / n)
    print(
        f"engine logic {args.logic}, {n:,} rounds, seed {args.seed}: Buster Blackjack returns "
        f"{100 * mean:.2f}% ± {100 * half:.2f}% (95% normal interval; exact 93.8659%)"
    )


if __name__ == "__main__":
    main()
