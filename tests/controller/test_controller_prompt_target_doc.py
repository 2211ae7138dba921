"""docs/protocol.md lists every key of the dealer prompt's `wait_decisions` target.

The doc named `kind`, `seat`, `hand`, `legal`, `mode`, `votes`, `eligible_voters` and
`voters` (the last two as if only a Majority Rules seat had them), while the target also
carried `insurance_players` and `surrender_seats`, and every key on every seat (a review).
"""

from __future__ import annotations

import re
from pathlib import Path

from studio.rules.round import BoxMode, Decision
from studio.rules.strategy import Action

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def documented_keys() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("#### `wait_decisions` target", 1)[1]
    section = re.split(r"\n#{2,4} ", section, maxsplit=1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)


def test_every_key_of_the_target_is_documented_and_no_other() -> None:
    emitted = Decision(kind="action").as_dict()
    assert sorted(documented_keys()) == sorted(emitted)


def test_every_key_is_there_whatever_the_decision() -> None:
    insurance = Decision(kind="insurance", insurance_players=((3, "p3"),), surrender_seats=(5,))
    action = Decision(kind="action", seat=2, hand=0, legal=(Action.HIT,), mode=BoxMode.PLAYER)
    assert insurance.as_dict()["insurance_players"] == [[3, "p3"]]
    assert insurance.as_dict().keys() == action.as_dict().keys()
    assert action.as_dict()["eligible_voters"] == 0 and action.as_dict()["voters"] == []
