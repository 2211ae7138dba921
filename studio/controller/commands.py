"""Commands from the game platform (REST and MQTT ``game/commands``) and from managers.

Every game command carries a client-supplied ``id``: a command whose id was
already accepted is acknowledged again and never applied twice.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from studio.errors import StudioError

ID_MAX_LENGTH = 128  # characters of a command's id at most (and 1 at least)
ROUND_ID_MAX_LENGTH = 96  # a round id {table}-R{n}: a table id is 64 characters at most

PlayerAction = Literal["hit", "stand", "double", "split", "surrender"]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(
        min_length=1, max_length=ID_MAX_LENGTH, description="client-supplied idempotency key"
    )
    player: str = Field(min_length=1, max_length=64)
    # Opt-in, since 2026-12-06: a command names no round otherwise, and one answered after
    # a backup and sent again once it was restored (the index of ids taken is the backup's)
    # was taken anew, into whatever round was open then (a review: a bet meant for t1-R9
    # placed on t1-R13). Named, it is applied to that round only, while it is open.
    round_id: str | None = Field(
        None, min_length=1, max_length=ROUND_ID_MAX_LENGTH, description="the round it is meant for"
    )

    @model_serializer(mode="wrap")
    def _unnamed_round_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A command that names no round is logged and answered as before the field existed.
        body: dict[str, Any] = handler(self)
        if self.round_id is None:
            body.pop("round_id", None)
        return body


# A side bet's amount, money as the stake is (at most 12 digits, 3 after the point), and
# 0 or more: 0 is no side bet (docs/protocol.md). Until 2026-12-07 any decimal was taken:
# "1.0099999999" was rounded to 1.00 unsaid, and "-1" was refused by the table (a
# command_rejected that took the id) where a stake of -1 is no command (the id stays free).
SideBetAmount = Annotated[Decimal, Field(ge=0, max_digits=12, decimal_places=3)]


class BetCommand(_Command):
    type: Literal["bet"] = "bet"
    seat: int = Field(ge=1, le=7, strict=True)
    stake: Decimal = Field(gt=0, max_digits=12, decimal_places=3)
    side_bets: dict[str, SideBetAmount] = Field(default_factory=dict)
    # Every boolean is strict, as the seat is: JSON true or false only. Until 2026-12-06
    # "yes", "on", "n", 1 and 0 were coerced ("consent_auto": "on" consented to automatic
    # debits), and such a command was taken as one (REST: 409 at the wrong time, not 422).
    behind: bool = Field(False, strict=True, description="a bet behind the seated player's box")
    # Seed 004: a player who does not commit is not charged for an automatic split or
    # double (follows the right hand; hits then stands): consent is given, never assumed.
    consent_auto: bool = Field(False, strict=True, description="consent to automatic split/double")
    behind_double: bool = Field(
        True, strict=True, description="bet behind: double when the seated player does"
    )
    behind_split: Literal["follow", "first_hand"] = "follow"
    allow_bet_behind: bool = Field(
        True, strict=True, description="seated bet: let other players bet behind this box"
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
    take: bool = Field(strict=True)


class EarlySurrenderCommand(_Command):
    """The seated player's answer to early surrender (dealer's ace up, before the peek).

    ``take`` false declines it, so the round need not wait for the decision timer.
    """

    type: Literal["early_surrender"] = "early_surrender"
    seat: int = Field(ge=1, le=7, strict=True)
    take: bool = Field(strict=True)


GameCommand = Annotated[
    BetCommand | DecisionCommand | VoteCommand | InsuranceCommand | EarlySurrenderCommand,
    Field(discriminator="type"),
]
# A command as sent (REST, MQTT): what the controller takes.
game_command = TypeAdapter(GameCommand)


class LoggedBetCommand(BetCommand):
    """A bet as the event log may hold it: one logged before 2026-12-07 has side bets of
    any amount (the table refused a negative one, rounded one of 10 decimals), and is
    replayed as it was taken, never refused by a check it did not meet then."""

    side_bets: dict[str, Decimal] = Field(default_factory=dict)


LoggedCommand = Annotated[
    LoggedBetCommand | DecisionCommand | VoteCommand | InsuranceCommand | EarlySurrenderCommand,
    Field(discriminator="type"),
]
# A command as logged (a table's input, replayed or live: a live one passed game_command).
logged_command = TypeAdapter(LoggedCommand)
COMMAND_TYPES = tuple(
    model.model_fields["type"].default for model in get_args(get_args(GameCommand)[0])
)

# Every field a game command has: the only names a refusal's reason repeats (below).
COMMAND_FIELDS = frozenset(
    name for model in get_args(get_args(GameCommand)[0]) for name in model.model_fields
)
# An unknown field's name is repeated when it looks like a field name (letters and
# underscores, as short as ours): `colour`, `stakes`; not a key such as a card's number.
_FIELD_NAME = re.compile(r"[A-Za-z_]{1,32}")

REASON_ERRORS = 5  # validation errors a refusal names (then "and N more")
REASON_LIMIT = 500  # characters of a refusal's reason at most


def command_id(value: object) -> str | None:
    """``value`` when it is a valid command id (a string of 1-128 characters that UTF-8
    can write), else None. A lone surrogate (``"\\ud800"``, which ``json.loads`` reads)
    is none: echoed in a notice it could not be sent, and the message got no answer."""
    if not isinstance(value, str) or not 1 <= len(value) <= ID_MAX_LENGTH:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def command_type(value: object) -> str | None:
    """``value`` when it is a game command's ``type``, else None."""
    return value if isinstance(value, str) and value in COMMAND_TYPES else None


def invalid_reason(error: Exception) -> str:
    """Why a message is no game command, in words, for the platform that sent it
    (``game/command_errors``): each error's field and pydantic's message, at most
    :data:`REASON_ERRORS` of them (the same one said once) and :data:`REASON_LIMIT`
    characters; never the values sent, nor the keys the sender chose (a ``side_bets``
    key is ``side_bets.<key>``, an unknown field whose name is no field name
    ``<unknown field>``), nor a traceback."""
    if not isinstance(error, ValidationError):
        return f"not a game command ({type(error).__name__})"
    parts: list[str] = []
    errors = error.errors(include_url=False, include_input=False, include_context=False)
    for item in errors:
        if item["type"] in ("union_tag_not_found", "union_tag_invalid"):
            text = f"type: must be one of {', '.join(COMMAND_TYPES)}"
        else:
            loc = _location(item["loc"], unknown=item["type"] == "extra_forbidden")
            text = f"{loc}: {item['msg']}" if loc else item["msg"]
        if text not in parts:
            parts.append(text)
    more = len(parts) - REASON_ERRORS
    parts = parts[:REASON_ERRORS] + ([f"and {more} more"] if more > 0 else [])
    reason = "; ".join(parts) or "not a game command"
    return reason if len(reason) <= REASON_LIMIT else reason[: REASON_LIMIT - 3] + "..."


def _location(loc: tuple[int | str, ...], *, unknown: bool) -> str:
    """An error's location in words, naming only the fields a command has: the type the
    union chose is left out (the notice names it as ``type``), a dict's key (the sender's
    choice) is ``<key>``, an unknown field is named only when it looks like a field."""
    parts = list(loc)
    if parts and parts[0] in COMMAND_TYPES:
        parts = parts[1:]
    words: list[str] = []
    for depth, part in enumerate(parts):
        if isinstance(part, int):
            words.append(str(part))
        elif depth == 0 and part in COMMAND_FIELDS:
            words.append(part)
        elif depth == 0 and unknown and len(parts) == 1:
            words.append(part if _FIELD_NAME.fullmatch(part) else "<unknown field>")
        else:
            words.append("<key>")
    return ".".join(words)


ManagerVerb = Literal["acknowledge", "resolve", "pause", "resume", "cancel_round", "shoe_change"]
MIN_REASON_LENGTH = 3


class ReasonError(StudioError, ValueError):
    """A manager action that alters a table has no reason (or too short a one)."""


class CommandIdTaken(StudioError):
    """A game command came under an id the table took for another command (another body):
    refused, nothing applied or logged. Answered with the first command's answer, it told a
    platform that a bet for another player on another seat was taken (a review).

    ``first`` is what the id's first command came to, for the platform that sent both under
    its id: its ``type`` and its answer (``accepted``, a bet's ``taken``, a refusal's
    ``reason``), as its ``command_accepted`` or ``command_rejected`` said. Until 2026-12-07
    the refusal said only "nothing was applied", and a platform that read it as "the bet
    failed" did not debit a bet the table took under that id and would settle."""

    def __init__(self, message: str, command_id: str = "", first: dict[str, Any] | None = None):
        super().__init__(message)
        self.command_id = command_id
        self.first: dict[str, Any] = first or {}


class RoundNotInPlay(StudioError):
    """A manager action named the round it was meant for, and that round is not the one in
    play (it ended, another began, or none is in play): refused before it is applied, and
    not logged, since it changed nothing and its round was never the table's to alter."""


class AlertNotShown(StudioError):
    """A manager action named the alert it was meant for by more than its id (its ``code``,
    the time it was raised), and the table's alert of that id is another one: refused
    before it is applied, and not logged, as :class:`RoundNotInPlay`. An alert shown before
    its write failed is rolled back with it, and its id is given to the next alert raised
    (a review: a manager's ``cancel`` meant for "KS drawn before bets closed" cancelled the
    round through an integrity alert that got the same id)."""


class NotAllowed(StudioError):
    """The account acting is no longer allowed the action (disabled, or its role lowered
    since its request's role check): refused before it is applied, and logged as a refused
    manager action (``manager.refused``)."""


def check_reason(reason: str) -> str:
    """The reason, trimmed; every manual alteration is logged with why it was made."""
    text = reason.strip()
    if len(text) < MIN_REASON_LENGTH:
        raise ReasonError(f"a reason is required (at least {MIN_REASON_LENGTH} characters)")
    if any("\ud800" <= char <= "\udfff" for char in text):
        # A byte that is no UTF-8 (a shell's argument, surrogate-escaped; a JSON "\udce9"):
        # it cannot be written out again, and a logged one broke every page listing it
        # (the users page answered 500 until 30 newer changes; a CLI review, 2026-12-07).
        raise ReasonError(
            "the reason is not UTF-8 text (is the terminal set to UTF-8?): type it again"
        )
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
