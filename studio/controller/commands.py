"""Commands from the game platform (REST and MQTT ``game/commands``) and from managers.

Every game command carries a client-supplied ``id``: a command whose id was
already accepted is acknowledged again and never applied twice.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from studio.errors import StudioError

PlayerAction = Literal["hit", "stand", "double", "split", "surrender"]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=128, description="client-supplied idempotency key")
    player: str = Field(min_length=1, max_length=64)


class BetCommand(_Command):
    type: Literal["bet"] = "bet"
    seat: int = Field(ge=1, le=7, strict=True)
    stake: Decimal = Field(gt=0, max_digits=12, decimal_places=3)
    side_bets: dict[str, Decimal] = Field(default_factory=dict)
    behind: bool = Field(False, description="a bet behind the seated player's box")
    # Seed 004: a player who does not commit is not charged for an automatic split or
    # double (follows the right hand; hits then stands): consent is given, never assumed.
    consent_auto: bool = Field(False, description="consent to automatic split/double")
    behind_double: bool = Field(True, description="bet behind: double when the seated player does")
    behind_split: Literal["follow", "first_hand"] = "follow"
    allow_bet_behind: bool = Field(
        True, description="seated bet: let other players bet behind this box"
    )


class DecisionCommand(_Command):
    type: Literal["decision"] = "decision"
    seat: int = Field(ge=1, le=7, strict=True)
    action: PlayerAction


class VoteCommand(_Command):
    type: Literal["vote"] = "vote"
    seat: int = Field(ge=1, le=7, strict=True)
    action: PlayerAction


class InsuranceCommand(_Command):
    type: Literal["insurance"] = "insurance"
    # None: every wager of the player's that insurance is offered on (seed 004: "If you are
    # seated on both seats, insurance is applied on both positions"); until 2026-12-06 a
    # seat was required, and the other seat's question timed out to no insurance.
    seat: int | None = Field(None, ge=1, le=7, strict=True)
    take: bool


class EarlySurrenderCommand(_Command):
    """The seated player's answer to early surrender (dealer's ace up, before the peek).

    ``take`` false declines it, so the round need not wait for the decision timer.
    """

    type: Literal["early_surrender"] = "early_surrender"
    seat: int = Field(ge=1, le=7, strict=True)
    take: bool


GameCommand = Annotated[
    BetCommand | DecisionCommand | VoteCommand | InsuranceCommand | EarlySurrenderCommand,
    Field(discriminator="type"),
]
game_command = TypeAdapter(GameCommand)
COMMAND_TYPES = tuple(
    model.model_fields["type"].default for model in get_args(get_args(GameCommand)[0])
)

REASON_ERRORS = 5  # validation errors a refusal names (then "and N more")
REASON_LIMIT = 500  # characters of a refusal's reason at most


def invalid_reason(error: Exception) -> str:
    """Why a message is no game command, in words, for the platform that sent it
    (``game/command_errors``): each error's field and pydantic's message, at most
    :data:`REASON_ERRORS` of them and :data:`REASON_LIMIT` characters; never the values
    sent (the names of fields it does not know, yes) nor a traceback."""
    if not isinstance(error, ValidationError):
        return f"not a game command ({type(error).__name__})"
    parts = []
    errors = error.errors(include_url=False, include_input=False, include_context=False)
    for item in errors[:REASON_ERRORS]:
        loc = [str(part) for part in item["loc"]]
        if loc and loc[0] in COMMAND_TYPES:
            loc = loc[1:]  # the command type the union chose: the notice names it as `type`
        if item["type"] in ("union_tag_not_found", "union_tag_invalid"):
            text = f"type: must be one of {', '.join(COMMAND_TYPES)}"
        else:
            text = f"{'.'.join(loc)}: {item['msg']}" if loc else item["msg"]
        parts.append(text)
    if len(errors) > REASON_ERRORS:
        parts.append(f"and {len(errors) - REASON_ERRORS} more")
    reason = "; ".join(parts) or "not a game command"
    return reason if len(reason) <= REASON_LIMIT else reason[: REASON_LIMIT - 3] + "..."


ManagerVerb = Literal["acknowledge", "resolve", "pause", "resume", "cancel_round", "shoe_change"]
MIN_REASON_LENGTH = 3


class ReasonError(StudioError, ValueError):
    """A manager action that alters a table has no reason (or too short a one)."""


class CommandIdTaken(StudioError):
    """A game command came under an id the table took for another command (another body):
    refused, nothing applied or logged. Answered with the first command's answer, it told a
    platform that a bet for another player on another seat was taken (a review)."""


class RoundNotInPlay(StudioError):
    """A manager action named the round it was meant for, and that round is not the one in
    play (it ended, another began, or none is in play): refused before it is applied, and
    not logged, since it changed nothing and its round was never the table's to alter."""


def check_reason(reason: str) -> str:
    """The reason, trimmed; every manual alteration is logged with why it was made."""
    text = reason.strip()
    if len(text) < MIN_REASON_LENGTH:
        raise ReasonError(f"a reason is required (at least {MIN_REASON_LENGTH} characters)")
    return text


# For request bodies: a ValueError in a validator is a 422 naming the field.
Reason = Annotated[str, Field(max_length=500), AfterValidator(check_reason)]


class ManagerAction(BaseModel):
    """A shift manager's action. Recorded with who, when, why, and the state before and after."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verb: ManagerVerb
    user: str = Field(min_length=1)
    # Not checked here: the log holds actions from before the reason rule, and a logged
    # action is validated again when it replays. Entry points check with check_reason.
    reason: str = ""
    alert_id: str | None = None
    resolution: Literal["accept", "correct", "void", "cancel"] | None = None
    card: str | None = None
