"""The simulation cross-check: its interval, and a report a regulator can reproduce."""

from __future__ import annotations

import json
import statistics
from random import Random

from typer.testing import CliRunner

from studio.certification.simulate import _Shoe, format_simulation, play_round, run_simulation
from studio.cli import app
from studio.rules.ruleset import preset

runner = CliRunner()


def test_the_interval_is_the_normal_one_from_the_rounds_played() -> None:
    """Replay the very rounds (chunk seeds drawn in order from the seed) and recompute."""
    rules = preset("classic6")
    rounds, chunk, seed = 90, 30, 1234
    sim = run_simulation(rules, rounds, workers=1, seed=seed, progress=False, chunk=chunk)
    master = Random(seed)
    results: list[float] = []
    for _ in range(rounds // chunk):
        shoe = _Shoe(rules.shoe.decks, Random(master.getrandbits(63)))
        results.extend(play_round(rules, shoe) for _ in range(chunk))
    mean = statistics.fmean(results)
    se = statistics.stdev(results) / len(results) ** 0.5
    z = statistics.NormalDist().inv_cdf(0.975)
    assert sim.rounds == rounds
    assert abs(sim.rtp - (1 + mean)) < 1e-12
    assert abs(sim.std_error - se) < 1e-12
    low, high = sim.interval
    assert abs(low - (1 + mean - z * se)) < 1e-9
    assert abs(high - (1 + mean + z * se)) < 1e-9
    assert sim.agrees_with(1 + mean) and not sim.agrees_with(high + 1e-6)


def test_the_report_names_the_rounds_and_the_seed_and_reproduces() -> None:
    """Without --seed a seed is still drawn, reported, and gives the same figures again."""
    rules = preset("classic6")
    sim = run_simulation(rules, 40, workers=1, seed=None, progress=False, chunk=20)
    assert isinstance(sim.seed, int)
    text = format_simulation(sim, 0.992)
    assert "40 rounds" in text
    assert f"seed {sim.seed}" in text
    assert sim.as_json(0.992)["seed"] == sim.seed
    again = run_simulation(rules, 40, workers=1, seed=sim.seed, progress=False, chunk=20)
    assert (again.rtp, again.std_error, again.seed) == (sim.rtp, sim.std_error, sim.seed)


def test_rtp_json_records_the_simulation_seed() -> None:
    result = runner.invoke(
        app,
        ["rtp", "-r", "classic6", "--main", "--simulate", "20", "--workers", "1", "--seed", "77"],
    )
    assert result.exit_code == 0, result.output
    assert "20 rounds" in result.output and "seed 77" in result.output
    data = json.loads(
        runner.invoke(
            app,
            ["rtp", "-r", "classic6", "--main", "--json", "--simulate", "20", "--workers", "1"],
        ).stdout  # the progress (stderr) is shown with --json too
    )
    assert isinstance(data["simulation"]["seed"], int)
    assert data["simulation"]["rounds"] == 20
