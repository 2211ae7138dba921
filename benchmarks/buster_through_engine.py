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
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction
from random import Random

from studio.certification.rulesets import side_bet_result
from studio.certification.simulate import PLAYER, SEAT, STAKE, _Shoe, play_until_card
from studio.rules.paytables import SideBetKind
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


def _at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    return parse


def exact_rtp() -> Fraction:
    """The certification's exact figure for the same bet (``studio rtp``'s own function)."""
    rules = preset("majority_speed")
    kind = SideBetKind(BUSTER)
    return side_bet_result(kind, rules.side_bets[kind].paytable, rules).rtp


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=_at_least(2), default=200_000)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument(
        "--logic",
        type=int,
        choices=range(1, LOGIC + 1),
        default=LOGIC,
        metavar=f"1..{LOGIC}",
        help="the engine logic to deal by",
    )
    parser.add_argument("--workers", type=_at_least(1), default=2)
    args = parser.parse_args(argv)
    # Every round counts: whole chunks of CHUNK rounds and the rest in a last, shorter one.
    sizes = [CHUNK] * (args.rounds // CHUNK) + (
        [args.rounds % CHUNK] if args.rounds % CHUNK else []
    )
    jobs = [(args.logic, args.seed * 100_003 + i, size) for i, size in enumerate(sizes)]
    with ProcessPoolExecutor(args.workers) as pool:
        parts = list(pool.map(chunk, jobs))
    n = sum(sizes)
    mean = sum(p[0] for p in parts) / n
    variance = max(0.0, sum(p[1] for p in parts) / n - mean * mean)
    half = 1.96 * math.sqrt(variance / n)
    print(
        f"engine logic {args.logic}, {n:,} rounds, seed {args.seed}: Buster Blackjack returns "
        f"{100 * mean:.2f}% ± {100 * half:.2f}% (95% normal interval; "
        f"exact {100 * float(exact_rtp()):.4f}%)"
    )


if __name__ == "__main__":
    main()
