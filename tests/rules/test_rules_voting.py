"""Majority Rules vote counting (seed 004)."""

from __future__ import annotations

from studio.rules.strategy import Action
from studio.rules.voting import decided_now, plurality

H, S, D = Action.HIT, Action.STAND, Action.DOUBLE


def _votes(*actions: Action) -> dict[str, Action]:
    return {f"p{i}": a for i, a in enumerate(actions)}


def test_more_than_half_wins_at_once() -> None:
    assert decided_now(_votes(H, H, H), eligible=5) is H
    assert decided_now(_votes(H, H), eligible=4) is None  # 50% is not more than 50%


def test_seed_example_twenty_players() -> None:
    votes = _votes(*([H] * 9 + [S] * 6 + [D] * 5))
    assert decided_now(votes, eligible=20) is H


def test_wins_when_outstanding_votes_cannot_catch_up() -> None:
    assert decided_now(_votes(H, H, H, S), eligible=10) is None  # 6 outstanding
    assert decided_now(_votes(H, H, H, H, S), eligible=8) is None  # 1 + 3 could tie 4
    assert decided_now(_votes(H, H, H, H, H, S, S, D), eligible=10) is H  # 2 + 2 < 5


def test_timer_end_plurality_and_tie() -> None:
    assert plurality(_votes(H, H, S)) is H
    assert plurality(_votes(H, S)) is None
    assert plurality({}) is None


def test_wins_when_outstanding_votes_could_at_most_tie_and_nothing_can_pass_half() -> None:
    """Seed 004: "when no action can exceed the 50% threshold and votes given to any other
    action cannot surpass the score of the most popular action"."""
    votes = _votes(H, H, H, S, S, D, D)  # 8 players: hit 3, one vote to come
    assert decided_now(votes, eligible=8) is H  # stand 2 + 1 only ties; hit 3 + 1 is 50%
    assert decided_now(votes, eligible=8, may_tie=False) is None  # engine logic 1
    # Hit 2 of 4 with 2 to come could still pass 50%: the vote stays open.
    assert decided_now(_votes(H, H), eligible=5) is None
    # Two players, one vote: the other could tie, but hit could also reach 100%.
    assert decided_now(_votes(H), eligible=2) is None
    # Everyone voted and two actions tie: nothing is decided (best strategy decides).
    assert decided_now(_votes(H, H, S, S), eligible=4) is None
