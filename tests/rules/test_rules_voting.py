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
