"""Simulation cross-check: play rounds through the rules engine with its best strategy.

Every round is a real :class:`studio.rules.round.Round` of the rule set: one
box, one seated wager of 10 units, no side bets, insurance declined. Decisions
are the engine's own best strategy (:func:`studio.rules.strategy.best_action`,
the same function the round uses for Best Strategy seats and timeouts; Best
Strategy and Majority boxes are resolved by the engine itself), early surrender
uses the engine strategy's ``early_surrender``. Each round is dealt from a full,
freshly shuffled shoe, which is what the exact analysis assumes (a partial
Fisher-Yates draw over the shoe array: every round draws uniformly without
replacement from all ``52 * decks`` cards).

Work is split in chunks over a process pool (all cores by default); progress
goes to stderr. The RTP is the mean net result per initial unit staked, with a
normal-approximation confidence interval from the sample variance.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import secrets
import sys
import time
from dataclasses import dataclass
from decimal import Decimal
from random import Random
from typing import Any

from studio.cards import Card, full_deck
from studio.errors import StudioError
from studio.rules.round import BoxMode, CardFor, Round, RoundConfig
from studio.rules.ruleset import RuleSet, ruleset_from_spec
from studio.rules.strategy import Action, best_action, card_state, strategy_for

STAKE = Decimal(10)
SEAT = 1
PLAYER = "sim"
CHUNK = 2_000


@dataclass(frozen=True, slots=True)
class ChunkResult:
    rounds: int
    total: float  # sum of net results per unit staked
    total_sq: float
    seconds: float


@dataclass(frozen=True, slots=True)
class SimulationResult:
    rounds: int
    mean: float  # expected net per initial unit (RTP - 1)
    std_error: float
    workers: int
    seconds: float
    cpu_seconds: float
    seed: int  # the master seed: the same seed and rounds play the same rounds again
    confidence: float = 0.95

    @property
    def rtp(self) -> float:
        return 1.0 + self.mean

    @property
    def z(self) -> float:
        return _z_for(self.confidence)

    @property
    def interval(self) -> tuple[float, float]:
        half = self.z * self.std_error
        return self.rtp - half, self.rtp + half

    @property
    def rounds_per_second_per_core(self) -> float:
        return self.rounds / self.cpu_seconds if self.cpu_seconds > 0 else 0.0

    def agrees_with(self, exact_rtp: float) -> bool:
        low, high = self.interval
        return low <= exact_rtp <= high

    def as_json(self, exact_rtp: float | None = None) -> dict[str, Any]:
        low, high = self.interval
        out: dict[str, Any] = {
            "rounds": self.rounds,
            "seed": self.seed,
            "rtp": self.rtp,
            "std_error": self.std_error,
            "confidence": self.confidence,
            "interval": [low, high],
            "workers": self.workers,
            "seconds": self.seconds,
            "rounds_per_second_per_core": self.rounds_per_second_per_core,
        }
        if exact_rtp is not None:
            out["exact_rtp"] = exact_rtp
            out["agrees"] = self.agrees_with(exact_rtp)
        return out


def _z_for(confidence: float) -> float:
    """Two-sided normal quantile by bisection on erfc (no scipy)."""
    target = 1.0 - confidence
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if math.erfc(mid / math.sqrt(2)) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class _Shoe:
    """A full shoe; every draw is uniform over the cards not yet drawn this round."""

    def __init__(self, decks: int, rng: Random) -> None:
        self.cards: list[Card] = full_deck() * decks
        self.rng = rng
        self.i = 0

    def new_round(self) -> None:
        self.i = 0

    def draw(self) -> Card:
        cards, i = self.cards, self.i
        j = self.rng.randrange(i, len(cards))
        cards[i], cards[j] = cards[j], cards[i]
        self.i = i + 1
        return cards[i]


def begin_round(rules: RuleSet) -> Round:
    """A new round of the rule set with betting open (a burn card may be due first)."""
    rnd = Round(rules, RoundConfig(shoe_cards_dealt=0, new_shoe=True))
    rnd.open_betting()
    return rnd


def bet(rnd: Round, consent: bool = True) -> None:
    """The simulated player's wager: one seated box, no side bets; betting closes.

    ``consent``: the wager pays for automatic splits and doubles (seed 004's
    consent; a player who did not give it hits then stands, follows the first hand).
    """
    rnd.place_wager(SEAT, PLAYER, STAKE, {}, auto_consent=consent)
    rnd.close_betting()


def play_until_card(rnd: Round, first_action: Action | None = None) -> bool:
    """Answer every decision the round waits for (betting closed) with the engine's strategy.

    Returns ``True`` when a card is due, ``False`` when the round is complete.
    Insurance is declined; early surrender follows the engine strategy; Best
    Strategy and Majority boxes are resolved by the engine itself.
    ``first_action`` (used by the exact check, never by the simulation) replaces
    the strategy's first decision on the initial hand; it needs a box its
    player decides.
    """
    rules = rnd.rules
    strategy = strategy_for(rules)
    while True:
        decision = rnd.pending_decision()
        if decision is None:
            return rnd.next_card().kind is not CardFor.NONE
        if decision.kind == "insurance":
            for seat in decision.surrender_seats:
                box = rnd.boxes[seat]
                hard, ace, _ = card_state(box.hands[0].cards)
                cards = box.hands[0].cards
                pair = len(cards) == 2 and cards[0].value == cards[1].value
                assert rnd.dealer_up is not None
                take = strategy.early_surrender(hard, ace, rnd.dealer_up.value, pair)
                rnd.early_surrender(seat, take, player=PLAYER)
            pending = rnd.pending_decision()
            if pending is not None and pending.kind == "insurance":
                for seat, player in pending.insurance_players:
                    rnd.insurance(player, False, seat)
            continue
        assert decision.seat is not None and decision.hand is not None
        box = rnd.boxes[decision.seat]
        hand = box.hands[decision.hand]
        if first_action is not None and not hand.from_split and not hand.actions:
            if box.mode is not BoxMode.PLAYER:
                raise StudioError("a forced first action needs a box its player decides")
            rnd.act(decision.seat, first_action, decision.hand, player=PLAYER)
            continue
        if box.mode is not BoxMode.PLAYER:
            rnd.timeout()  # Majority seats with no votes fall to best strategy
            continue
        assert rnd.dealer_up is not None
        action = best_action(
            rules, hand.cards, rnd.dealer_up, list(decision.legal), hand.from_split
        )
        rnd.act(decision.seat, Action(action), decision.hand, player=PLAYER)


def net_result(rnd: Round) -> float:
    """Settle a complete round; the net result per unit of the initial stake."""
    result = rnd.settle()
    return float(result.payouts - result.stakes) / float(STAKE)


def play_round(rules: RuleSet, shoe: _Shoe) -> float:
    """Play one round through the engine; return the net result per unit staked."""
    shoe.new_round()
    rnd = begin_round(rules)
    while rnd.next_card().kind is CardFor.BURN:
        rnd.deal(shoe.draw())
    bet(rnd)
    while play_until_card(rnd):
        rnd.deal(shoe.draw())
    return net_result(rnd)


def _run_chunk(args: tuple[dict[str, Any], int, int]) -> ChunkResult:
    spec, rounds, seed = args
    rules = ruleset_from_spec(spec)
    rng = Random(seed)
    shoe = _Shoe(rules.shoe.decks, rng)
    strategy_for(rules)  # build the engine's strategy before timing
    started = time.process_time()
    total = 0.0
    total_sq = 0.0
    for _ in range(rounds):
        x = play_round(rules, shoe)
        total += x
        total_sq += x * x
    return ChunkResult(rounds, total, total_sq, time.process_time() - started)


def _warm(spec: dict[str, Any]) -> None:
    strategy_for(ruleset_from_spec(spec))


def run_simulation(
    rules: RuleSet,
    rounds: int,
    *,
    workers: int | None = None,
    seed: int | None = None,
    progress: bool = True,
    confidence: float = 0.95,
    chunk: int = CHUNK,
) -> SimulationResult:
    """Play ``rounds`` rounds over ``workers`` processes (default: every core)."""
    if rounds < 2:
        raise StudioError("--simulate needs at least 2 rounds")
    workers = workers or mp.cpu_count() or 1
    spec = rules.model_dump(mode="json")
    if seed is None:
        # Drawn here rather than left to the OS so the report can name it: a regulator
        # reruns the same rounds from the seed and the round count.
        seed = secrets.randbits(63)
    master = Random(seed)
    sizes = [chunk] * (rounds // chunk) + ([rounds % chunk] if rounds % chunk else [])
    tasks = [(spec, size, master.getrandbits(63)) for size in sizes]
    started = time.perf_counter()
    done = 0
    total = 0.0
    total_sq = 0.0
    cpu = 0.0
    last = 0.0
    # On a terminal one line rewritten in place each second; in a log a line every 10 s.
    live = sys.stderr.isatty()
    every, start, end = (1.0, "\r", "   ") if live else (10.0, "", "\n")
    strategy_for(rules)  # forked workers inherit the engine's (cached) strategy
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(workers, initializer=_warm, initargs=(spec,)) as pool:
        for res in pool.imap(_run_chunk, tasks):  # in order: same sums on any workers
            done += res.rounds
            total += res.total
            total_sq += res.total_sq
            cpu += res.seconds
            now = time.perf_counter()
            if progress and (now - last > every or done == rounds):
                last = now
                mean = total / done
                rate = done / (now - started)
                eta = (rounds - done) / rate if rate > 0 else 0.0
                sys.stderr.write(
                    f"{start}simulated {done:,}/{rounds:,} rounds  RTP so far "
                    f"{100 * (1 + mean):.3f}%  {rate:,.0f} rounds/s  ETA {eta:,.0f} s{end}"
                )
                sys.stderr.flush()
    if progress and live:
        sys.stderr.write("\n")
    mean = total / rounds
    var = max(0.0, (total_sq - rounds * mean * mean) / (rounds - 1))
    return SimulationResult(
        rounds=rounds,
        mean=mean,
        std_error=math.sqrt(var / rounds),
        workers=workers,
        seconds=time.perf_counter() - started,
        cpu_seconds=cpu,
        seed=seed,
        confidence=confidence,
    )


def format_simulation(sim: SimulationResult, exact_rtp: float | None) -> str:
    low, high = sim.interval
    lines = [
        f"Simulation through the rules engine ({sim.rounds:,} rounds, seed {sim.seed}, "
        f"{sim.workers} workers, {sim.seconds:.1f} s, "
        f"{sim.rounds_per_second_per_core:,.0f} rounds/s per core)",
        f"  simulated RTP {sim.rtp * 100:.4f}%  ± {sim.z * sim.std_error * 100:.4f}% "
        f"({sim.confidence:.0%} CI {low * 100:.4f}% .. {high * 100:.4f}%)",
    ]
    if exact_rtp is None:
        lines.append("  no exact RTP to compare with (the main game is not computed)")
    else:
        verdict = "agrees" if sim.agrees_with(exact_rtp) else "DOES NOT AGREE"
        diff = (sim.rtp - exact_rtp) / sim.std_error if sim.std_error else 0.0
        lines.append(
            f"  exact RTP (engine basic strategy) {exact_rtp * 100:.4f}%: {verdict} "
            f"(difference {diff:+.2f} standard errors)"
        )
    return "\n".join(lines)
