"""Payload models of contract v1 (device side).

Every event carries the ``device`` that produced it, that device's ``seq``
(strictly increasing per device, starting at 1) and ``ts``, an RFC 3339 UTC time
stamped at the source. Consumers drop duplicates by (device, seq) and report gaps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from studio.cards import normalise_code
from studio.contract.rounds import rfc3339, to_utc

ZONE_PATTERN = r"^(dealer|seat:[1-9][0-9]?(:h[1-9])?)$"


def utc_now() -> datetime:
    return datetime.now(UTC)


class Payload(BaseModel):
    # Consumers tolerate new fields (the contract may grow); producers emit only declared ones.
    model_config = ConfigDict(extra="ignore", frozen=True)


class SourceEvent(Payload):
    device: str = Field(min_length=1, max_length=64)
    seq: int = Field(ge=1)
    ts: AwareDatetime

    @field_validator("ts")
    @classmethod
    def _to_utc(cls, value: datetime) -> datetime:
        return to_utc(value)

    @field_serializer("ts")
    def _rfc3339(self, value: datetime) -> str:
        return rfc3339(value)


# A card's ``shoe`` when its driver has not seen the load (a protocol whose card frames carry
# no shoe id, a driver started mid-shoe): no claim, so the controller does not check it.
UNKNOWN_SHOE = "unknown"
# A shoe (load) id: a card's ``shoe`` and a ``shoe_loaded`` event's ``data.shoe``.
MAX_SHOE_ID = 64


class ShoeCard(SourceEvent):
    """``studio/v1/tables/{table}/shoe/cards``: a card drawn from the shoe."""

    card: str
    shoe: str = Field(min_length=1, max_length=MAX_SHOE_ID)
    serial: str | None = Field(None, description="card serial, for barcoded decks")

    @field_validator("card")
    @classmethod
    def _card(cls, value: str) -> str:
        return normalise_code(value)


class CameraCard(SourceEvent):
    """``studio/v1/tables/{table}/camera/cards``: a card seen on the layout.

    ``card`` is ``None`` when the card was seen but could not be read with
    enough confidence (it is never guessed).
    """

    card: str | None
    zone: str = Field(pattern=ZONE_PATTERN)
    confidence: float = Field(ge=0.0, le=1.0)
    event: Literal["placed", "removed"] = "placed"
    method: str | None = None
    serial: str | None = None

    @field_validator("card")
    @classmethod
    def _card(cls, value: str | None) -> str | None:
        return None if value is None else normalise_code(value)


class DeviceEvent(SourceEvent):
    """Shuffler, cut-card and non-card shoe events: ``event`` names what happened."""

    event: str = Field(min_length=1, max_length=64)
    data: dict[str, Any] = Field(default_factory=dict)


class ShoeEvent(DeviceEvent):
    """``studio/v1/tables/{table}/shoe/events`` as taken off the wire: a ``DeviceEvent``
    whose ``shoe_loaded`` names a valid shoe id. (Logged inputs replay as ``DeviceEvent``,
    as they were taken.)"""

    @model_validator(mode="after")
    def _shoe_loaded_id(self) -> ShoeEvent:
        """A load's shoe id is a card's ``shoe``: a string of 1 to 64 characters, not
        ``unknown`` (no claim). Unchecked, a publisher's 60 KB id went into every state
        snapshot of the table (a review); the drivers refuse such a frame already."""
        if self.event == "shoe_loaded" and "shoe" in self.data:
            shoe = self.data["shoe"]
            if not isinstance(shoe, str) or not 1 <= len(shoe) <= MAX_SHOE_ID:
                raise ValueError(f"data.shoe must be a string of 1 to {MAX_SHOE_ID} characters")
            if shoe == UNKNOWN_SHOE:
                raise ValueError(f"data.shoe {UNKNOWN_SHOE!r} is reserved (a card's 'no claim')")
        return self


class DeviceHealth(SourceEvent):
    """``.../devices/{device}/health``: garbled frames, checksum errors, silence, reconnects."""

    status: Literal["ok", "degraded", "offline"]
    reason: str
    counters: dict[str, int] = Field(default_factory=dict)


class Availability(Payload):
    """Retained ``online``/``offline`` is sent as a bare string; this model documents it."""

    state: Literal["online", "offline"]

    @classmethod
    def from_wire(cls, data: bytes) -> Availability:
        """The wire form is the bare word, as Home Assistant-style bridges use."""
        return cls.model_validate({"state": data.decode("utf-8", "replace").strip()})

    def to_wire(self) -> bytes:
        return self.state.encode()


class ReplayRequest(Payload):
    """``.../devices/{device}/replay``: publish again every event with ``seq >= from_seq``."""

    from_seq: int = Field(ge=1)
    to_seq: int | None = Field(None, ge=1)
    requester: str = ""


class DeviceCommand(Payload):
    """``.../devices/{device}/commands``: ask a device to act (shuffler: ``shuffle``, ``eject``).

    The outcome shows as the device's own events (``shuffle_started``, ``ejected``);
    a refusal (door open, busy) as a ``degraded`` health event naming the command.
    """

    command: str = Field(min_length=1, max_length=32)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str = ""
    requester: str = ""
