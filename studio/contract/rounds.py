"""Payload models of contract v1 (controller side): round events, state, alerts, prompts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_serializer


def to_utc(value: datetime) -> datetime:
    """An aware time in UTC. One that falls outside the years 1-9999 there (9999-12-31T23:59
    at -05:00) is refused as a ValueError, which pydantic reports as invalid: its
    OverflowError passed through validation and ended the controller's consumer."""
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time falls outside the years 1 to 9999 in UTC") from None


# A time with a zone, held in UTC (queries and payloads).
UtcDatetime = Annotated[AwareDatetime, AfterValidator(to_utc)]


def rfc3339(value: datetime) -> str:
    """A time as the contract writes it: RFC 3339, UTC, milliseconds (``...12.345Z``)."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @field_serializer("ts", check_fields=False)
    def _ts(self, value: datetime) -> str:
        return rfc3339(value)


class RoundEvent(_Out):
    """``.../round/events``: one thing that happened in a round, in table order.

    ``seq`` is per table, strictly increasing, never reused (across rounds too),
    so consumers dedupe and detect gaps exactly as for device events.
    """

    table: str
    round_id: str
    seq: int = Field(ge=1)
    ts: AwareDatetime
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


class RoundState(_Out):
    """``.../round/state`` (retained): a snapshot of the current round."""

    table: str
    round_id: str | None
    seq: int = Field(ge=0, description="seq of the last round event folded into this state")
    ts: AwareDatetime
    phase: str
    paused: bool = False
    single_source: bool = False
    shoe: dict[str, Any] = Field(default_factory=dict)
    boxes: list[dict[str, Any]] = Field(default_factory=list)
    dealer: dict[str, Any] = Field(default_factory=dict)
    open_alerts: int = 0
    # Retained with the state, so that the broker can tell a start how far the table's
    # alert ids went: the alerts topic is not retained, and a log restored from an older
    # backup gave ids again that the platforms had seen for other alerts (a review).
    last_alert_id: str | None = Field(
        default=None,
        description="the id of the last alert the table raised (`{table}-A{n}`), none before",
    )
    next_card: dict[str, Any] | None = None
    pending: dict[str, Any] | None = Field(
        default=None,
        description="the players' decision awaited (as timeout_default's `pending`), or none",
    )
    deadline: AwareDatetime | None = Field(
        default=None,
        description=(
            "when betting closes (phase betting) or the pending decision times out; none "
            "while paused (the timers stop) or when nothing is awaited"
        ),
    )

    @field_serializer("deadline")
    def _deadline(self, value: datetime | None) -> str | None:
        # As every time of the contract (docs/protocol.md): until 2026-12-06 it went out
        # with microseconds, pydantic's own form.
        return None if value is None else rfc3339(value)


AlertState = Literal["raised", "acknowledged", "resolved"]
Severity = Literal["info", "warning", "critical"]


class AlertMessage(_Out):
    """``.../alerts``: an alert as raised, acknowledged or resolved."""

    alert_id: str
    table: str
    round_id: str | None
    ts: AwareDatetime
    code: str
    severity: Severity
    state: AlertState
    message: str
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    allowed_resolutions: list[str] = Field(default_factory=list)
    resolution: dict[str, Any] | None = None


class DealerPrompt(_Out):
    """``.../dealer/prompt`` (retained): what the dealer must do next, in words and as data."""

    table: str
    round_id: str | None
    ts: AwareDatetime
    action: str
    text: str
    target: dict[str, Any] | None = None
    # Something the dealer must know beside the next step (since 2026-12-07: the cut card is
    # out, so this round is the shoe's last; seed 004 has the dealer announce it).
    notice: str | None = None


class CommandError(_Out):
    """``.../game/command_errors``: a message on ``game/commands`` that is no game command
    (bad JSON, an unknown field, a missing one, a value out of range), answered so that the
    platform can tell a refused command from a lost one. Nothing was applied or logged, and
    its ``id`` was not taken: a corrected command may use it."""

    table: str
    ts: AwareDatetime
    id: str | None = Field(
        description="the message's `id` when it is a valid command id (1-128 characters)"
    )
    type: str | None = Field(description="the message's `type` when it is a command's")
    reason: str = Field(
        description="why it was refused, in words (capped; no value or key the sender chose)"
    )
    received_at: AwareDatetime
    suppressed: int = Field(
        0, ge=0, description="notices of the table not sent since the last one (rate limit)"
    )
    suppressed_ids: list[str] = Field(
        default_factory=list,
        description="the ids of those not sent, the first 20 with a valid id, in order",
    )

    @field_serializer("received_at")
    def _received_at(self, value: datetime) -> str:
        return rfc3339(value)


class DeviceStatus(_Out):
    """One device of a table as the controller sees it (an entry of :class:`TableDevices`)."""

    device: str
    kind: str
    availability: str = Field(description="unknown, online or offline")
    health: str = Field(description="unknown, or the device's last health status")
    awaited: bool = Field(description="online before the controller restarted, not heard since")
    last_seen: AwareDatetime | None = None

    @field_serializer("last_seen")
    def _last_seen(self, value: datetime | None) -> str | None:
        return None if value is None else rfc3339(value)


class TableDevices(_Out):
    """The ``devices`` stream channel (WebSocket/SSE only): every device of a table, sent
    when one's availability, health or ``awaited`` changes. Not on MQTT: the drivers
    publish availability and health there themselves."""

    table: str
    ts: AwareDatetime
    devices: list[DeviceStatus] = Field(default_factory=list)


# Why a stream that was asked to resume starts afresh instead (``StreamReset.reason``).
ResetReason = Literal["unknown_run", "too_old", "not_sent", "not_an_id"]


class StreamReset(BaseModel):
    """The ``stream_reset`` stream channel (WebSocket/SSE only): the first message of a
    stream asked to resume from an event id it cannot resume from. What follows is the
    latest state, as a new stream starts; what came after ``after`` the client catches up
    from REST. Not on MQTT, and named by no event id."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    table: str
    reason: ResetReason
    after: str
