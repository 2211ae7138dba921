"""Majority Rules voting (seed 004, GAME-FACTS §1).

* An action wins at once when it has more than 50% of the seat's eligible
  voters, or when the votes still to come cannot make another action reach
  it (every other action's votes plus all outstanding votes stay below it),
  or -- seed 004: "when no action can exceed the 50% threshold and votes given
  to any other action cannot surpass the score of the most popular action" --
  when they could at most tie it and it cannot pass 50% any more
  (``may_tie``; engine logic 2, see :data:`studio.rules.round.LOGIC`).
* When everyone has voted, or at the end of the action timer, the action with
  the most votes wins; a tie, or no votes at all, falls to best strategy
  (``None`` here; the round applies the best-strategy action).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from studio.rules.strategy import Action


def counts(votes: Mapping[str, Action]) -> Counter[Action]:
    return Counter(votes.values())


def decided_now(
    votes: Mapping[str, Action], eligible: int, *, may_tie: bool = True
) -> Action | None:
    """The action that has already won, before the timer ends, or None.

    ``may_tie=False`` is engine logic 1: the outstanding votes had to fall short of
    the leader, so a possible tie kept the vote open (and a tie then went to best
    strategy, where the seed had already taken the leader)."""
    if not votes:
        return None
    tally = counts(votes).most_common()
    leader, lead = tally[0]
    if 2 * lead > eligible:
        return leader
    outstanding = eligible - len(votes)
    runner_up = tally[1][1] if len(tally) > 1 else 0
    if runner_up + outstanding < lead:
        return leader
    if (
        may_tie
        and runner_up < lead
        and runner_up + outstanding == lead
        and 2 * (lead + outstanding) <= eligible
    ):
        return leader
    return None


def everyone_voted(votes: Mapping[str, Action], eligible: int) -> bool:
    return len(votes) >= eligible


def plurality(votes: Mapping[str, Action]) -> Action | None:
    """At the timer's end: the single most-voted action, or None on a tie / no votes."""
    if not votes:
        return None
    tally = counts(votes).most_common()
    if len(tally) > 1 and tally[0][1] == tally[1][1]:
        return None
    return tally[0][0]
