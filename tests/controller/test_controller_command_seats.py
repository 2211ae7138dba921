"""A command's seat is a JSON integer: `true`, `"1"` and `1.0` were taken as seat 1 by the
command model's lax parsing, before the engine's own check could see them (a review)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from studio.controller.commands import game_command

BODIES = [
    {"type": "bet", "stake": "10.00"},
    {"type": "decision", "action": "hit"},
    {"type": "vote", "action": "hit"},
    {"type": "insurance", "take": True},
    {"type": "early_surrender", "take": True},
]


@pytest.mark.parametrize("body", BODIES, ids=[b["type"] for b in BODIES])
@pytest.mark.parametrize("seat", [True, "1", 1.0])
def test_a_seat_that_is_not_an_integer_is_refused(body: dict[str, object], seat: object) -> None:
    command = {"id": "c1", "player": "p1", "seat": seat, **body}
    with pytest.raises(ValidationError, match="seat"):
        game_command.validate_python(command)
    with pytest.raises(ValidationError, match="seat"):
        game_command.validate_json(json.dumps(command))


@pytest.mark.parametrize("body", BODIES, ids=[b["type"] for b in BODIES])
def test_an_integer_seat_is_taken(body: dict[str, object]) -> None:
    command = {"id": "c1", "player": "p1", "seat": 3, **body}
    assert game_command.validate_json(json.dumps(command)).seat == 3  # type: ignore[union-attr]
