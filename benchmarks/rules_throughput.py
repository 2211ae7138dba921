"""Rules-engine throughput: rounds per second settled by the engine alone.

7 boxes (the clubhouse preset), one main bet per box with both side bets,
random legal decisions and random insurance choices, cards from a shuffled
8-deck shoe. Shuffling happens outside the timed section; only the engine
calls (betting, dealing, decisions, settlement) are timed.

    .venv/bin/python benchmarks/rules_throughput.py [--rounds 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from studio.cards import Card, full_deck
from studio.rules.round import CardFor, Round
from studio.rules.ruleset import RuleSet, preset


def play_round(rules: RuleSet, shoe: list[Card], rng: random.Random) -> int:
    """Play one 7-box round with random decisions; return the cards used."""
    rnd = Round(rules)
    rnd.open_betting()
    for seat in range(1, 8):
        rnd.place_wager(seat, f"p{seat}", "10.00", {"perfect_pairs": "1.00", "21+3": "1.00"})
    rnd.close_betting()
    used = 0
    while True:
        decision = rnd.pending_decision()
        if decision is None:
            if rnd.next_card().kind is CardFor.NONE:
                break
            rnd.deal(shoe[used])
            used += 1
        elif decision.kind == "insurance":
            for seat in decision.surrender_seats:
                rnd.early_surrender(seat, rng.random() < 0.2, player=f"p{seat}")
            pending = rnd.pending_decision()
            if pending is not None and pending.kind == "insurance":
                for seat, player in pending.insurance_players:
                    rnd.insurance(player, rng.random() < 0.2, seat)
        else:
            assert decision.seat is not None
            rnd.act(decision.seat, rng.choice(decision.legal), player=f"p{decision.seat}")
    rnd.settle()
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rules = preset("clubhouse")
    rng = random.Random(args.seed)
    shoes = []
    for _ in range(args.rounds):
        shoe = full_deck() * 8
        rng.shuffle(shoe)
        shoes.append(shoe[:80])
    start = time.perf_counter()
    cards = 0
    for shoe in shoes:
        cards += play_round(rules, shoe, rng)
    elapsed = time.perf_counter() - start
    print(
        f"{args.rounds} rounds, 7 boxes, {cards} cards in {elapsed:.2f} s: "
        f"{args.rounds / elapsed:.0f} rounds/s"
    )


if __name__ == "__main__":
    main()
