"""Commands from the game platform (REST and MQTT ``game/commands``) and from managers.

Every game command carries a client-supplied ``id``: a command whose id was
already accepted is acknowledged again and never applied twice.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

PlayerAction = Literal["hit", "stand", "double", "split", "surrender"]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=128, description="client-supplied idempotency key")
    player: str = Field(min_length=1, max_length=64)


class BetCommand(_Command):
    type: Literal["bet"] = "bet"
    seat: int = Field(ge=1, le=7)
    stake: Decimal = Field(gt=0, max_digits=12, decimal_places=3)
    side_bets: dict[str, Decimal] = Field(default_factory=dict)
    behind: bool = Field(False, description="a bet behind the seated player's box")
    consent_auto: bool = Field(True, description="consent to automatic split/double")
    behind_double: bool = Field(True, description="bet behind: double when the seated player does")
    behind_split: Literal["follow", "first_hand"] = "follow"


class DecisionCommand(_Command):
    type: Literal["decision"] = "decision"
    seat: int = Field(ge=1, le=7)
    action: PlayerAction


class VoteCommand(_Command):
    type: Literal["vote"] = "vote"
    seat: int = Field(ge=1, le=7)
    action: PlayerAction


class InsuranceCommand(_Command):
    type: Literal["insurance"] = "insurance"
    seat: int = Field(ge=1, le=7)
    take: bool


GameCommand = Annotated[
    BetCommand | DecisionCommand | VoteCommand | InsuranceCommand, Field(discriminator="type")
]
game_command = TypeAdapter(GameCommand)


ManagerVerb = Literal["acknowledge", "resolve", "pause", "resume", "cancel_round", "shoe_change"]


class ManagerAction(BaseModel):
    """A shift manager's action. Recorded with who, when, why, and the state before and after."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verb: ManagerVerb
    user: str = Field(min_length=1)
    reason: str = ""
    alert_id: str | None = None
    resolution: Literal["accept", "correct", "void", "cancel"] | None = None
    card: str | None = None
