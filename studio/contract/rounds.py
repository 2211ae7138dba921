"""Payload models of contract v1 (controller side): round events, state, alerts, prompts."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_serializer


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @field_serializer("ts", check_fields=False)
    def _rfc3339(self, value: datetime) -> str:
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    next_card: dict[str, Any] | None = None


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
