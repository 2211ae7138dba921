"""A game command's booleans are JSON true or false (docs/protocol.md, `GameCommand`):
`"take": "yes"`, `"consent_auto": "on"`, `"behind": 1` and `"take": "n"` were coerced by
the command model's lax parsing and taken as commands (REST answered 409, the command
refused for the game state, instead of 422), though `consent_auto` authorises automatic
debits. Strict now, as the seat already was (a review)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import get_args

import httpx
import pytest
from http_support import PLATFORM, app_client
from pydantic import ValidationError

import studio.console  # registers the users/sessions tables before create_all
from studio.controller.commands import GameCommand, game_command, invalid_reason
from studio.store import Database

assert studio.console.install is not None

# Each command type with every required field but its booleans.
BASES = {
    "bet": {"type": "bet", "seat": 1, "stake": "10.00"},
    "insurance": {"type": "insurance", "seat": 1},
    "early_surrender": {"type": "early_surrender", "seat": 1},
}
# (command type, field): every boolean of a game command.
FIELDS = [
    ("bet", "behind"),
    ("bet", "consent_auto"),
    ("bet", "behind_double"),
    ("bet", "allow_bet_behind"),
    ("insurance", "take"),
    ("early_surrender", "take"),
]
NOT_BOOLEANS = ["yes", "on", "n", "true", "1", 1, 0, 1.0, None]


def _command(kind: str, **fields: object) -> dict[str, object]:
    body: dict[str, object] = {"id": "c1", "player": "p1", **BASES[kind]}
    if kind != "bet":
        body["take"] = True
    return {**body, **fields}


def test_every_boolean_of_a_command_is_listed_here() -> None:
    found = {
        (model.model_fields["type"].default, name)
        for model in get_args(get_args(GameCommand)[0])
        for name, field in model.model_fields.items()
        if field.annotation is bool
    }
    assert found == set(FIELDS)


@pytest.mark.parametrize(("kind", "field"), FIELDS, ids=[f"{k}.{f}" for k, f in FIELDS])
@pytest.mark.parametrize("value", NOT_BOOLEANS, ids=repr)
def test_a_boolean_that_is_not_true_or_false_is_refused(
    kind: str, field: str, value: object
) -> None:
    command = _command(kind, **{field: value})
    with pytest.raises(ValidationError) as python:
        game_command.validate_python(command)
    with pytest.raises(ValidationError) as wire:
        game_command.validate_json(json.dumps(command))
    for refused in (python.value, wire.value):
        assert [e["loc"][-1] for e in refused.errors()] == [field]
        # The notice on game/command_errors names the field and says why.
        assert invalid_reason(refused) == f"{field}: Input should be a valid boolean"


@pytest.mark.parametrize(("kind", "field"), FIELDS, ids=[f"{k}.{f}" for k, f in FIELDS])
@pytest.mark.parametrize("value", [True, False])
def test_true_and_false_are_taken(kind: str, field: str, value: bool) -> None:
    command = _command(kind, **{field: value})
    assert getattr(game_command.validate_json(json.dumps(command)), field) is value
    assert getattr(game_command.validate_python(command), field) is value


@pytest.fixture
async def http(database: Database) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(database, "bj1") as client:
        yield client


async def test_rest_answers_a_boolean_that_is_not_true_or_false_422(
    http: httpx.AsyncClient,
) -> None:
    # The reviewed cases: 409 before (the table not betting, or no insurance offered).
    sent = [
        ("bets", {"consent_auto": "on"}, "bet", "consent_auto"),
        ("bets", {"behind": 1}, "bet", "behind"),
        ("insurance", {"take": "n"}, "insurance", "take"),
        ("commands", {"take": "yes"}, "insurance", "take"),
        ("early-surrender", {"take": 0}, "early_surrender", "take"),
        ("commands", {"allow_bet_behind": "false"}, "bet", "allow_bet_behind"),
        ("bets", {"behind_double": "true"}, "bet", "behind_double"),
    ]
    for path, fields, kind, field in sent:
        body = _command(kind, **fields)
        if path != "commands":
            del body["type"]
        answer = await http.post(f"/api/tables/bj1/{path}", json=body, headers=PLATFORM)
        assert answer.status_code == 422, (path, fields, answer.text)
        detail = answer.json()["detail"]
        assert [(e["loc"][-1], e["type"]) for e in detail] == [(field, "bool_type")], detail
    # A boolean sent as one is taken as a command (answered, whatever the game state).
    valid = _command("bet", consent_auto=True, behind=False)
    answer = await http.post("/api/tables/bj1/commands", json=valid, headers=PLATFORM)
    assert answer.status_code in (200, 409), answer.text
