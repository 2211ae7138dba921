"""The codec interface every device protocol implements, and the messages it speaks.

A codec is sans-I/O: :meth:`Codec.feed` takes whatever bytes the port produced
(any chunking: half a frame, three frames and some noise) and returns typed
:class:`Message` objects and :class:`FrameError` reports, in wire order.
:meth:`Codec.encode` turns a typed :class:`Command` into the bytes to write.
A codec never raises on input: bad input is a :class:`FrameError`, so a
garbled line can never stop a driver.

Adding another vendor's protocol is one new module with a :class:`Codec`
subclass that produces these same messages (see ``docs/devices.md``).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from studio.cards import Card, parse_card
from studio.contract.messages import MAX_SHOE_ID, UNKNOWN_SHOE
from studio.errors import CardCodeError

FrameErrorKind = Literal["garbage", "truncated", "too_long", "checksum", "malformed", "unknown"]

_COUNT = re.compile(r"[0-9]{1,15}")


def parse_count(text: str) -> int:
    """A number field (a count, a deck count, a command ref, a version): 1 to 15 digits.

    ``int()`` alone also takes a sign, surrounding spaces and ``_`` (``-32``, `` 8``,
    ``4_16``), so a census with a negative rank count would pass as a valid event.
    Raises ``ValueError`` (a ``malformed`` frame).
    """
    if not _COUNT.fullmatch(text):
        raise ValueError(f"not a count: {text!r}")
    return int(text)


# A card code as the wire carries it (docs/devices.md 2.1): rank ``A23456789TJQK`` (or
# ``10``) + suit ``SHDC``, upper case. ``parse_card`` alone also takes ``qh`` and `` QH ``
# (it serves people typing codes): a device that sends those is not the one specified.
_WIRE_CARD = re.compile(r"(?:[A2-9TJQK]|10)[SHDC]")
MAX_DECKS = 8


def parse_wire_card(text: str) -> Card:
    """A card code from a frame; raises ``ValueError`` (a ``malformed`` frame)."""
    if not _WIRE_CARD.fullmatch(text):
        raise ValueError(f"not a card code (rank A23456789TJQK + suit SHDC, upper case): {text!r}")
    try:
        return parse_card(text)
    except CardCodeError as exc:
        raise ValueError(str(exc)) from exc


def parse_decks(text: str) -> int:
    """A shoe's deck count: 1 to 8. Raises ``ValueError`` (a ``malformed`` frame): ``0`` and
    ``999999999999999`` decoded as loads of 0 and 10**15 decks."""
    decks = parse_count(text)
    if not 1 <= decks <= MAX_DECKS:
        raise ValueError(f"{decks} decks (1 to {MAX_DECKS})")
    return decks


# A shoe id as the contract takes it (``ShoeCard.shoe``: 1-64 characters); ``unknown`` is
# the driver's own word for "no load seen", which a device may not claim: it would turn
# the controller's check of the card's shoe off.
RESERVED_SHOE_IDS = frozenset({UNKNOWN_SHOE})


def check_shoe_id(text: str) -> str:
    """A shoe id from a frame. Raises ``ValueError`` (a ``malformed`` frame): an id over 64
    characters passed decoding and failed the contract when published, which ended every
    driver of the process (a fuzzing review)."""
    if not text:
        raise ValueError("empty shoe id")
    if len(text) > MAX_SHOE_ID:
        raise ValueError(f"shoe id of {len(text)} characters (at most {MAX_SHOE_ID})")
    if text in RESERVED_SHOE_IDS:
        raise ValueError(f"shoe id {text!r} is reserved")
    return text


@dataclass(frozen=True, slots=True)
class FrameError:
    """Bytes that are not a valid frame: reported as a health event, never raised."""

    kind: FrameErrorKind
    detail: str
    raw: bytes = b""


@dataclass(frozen=True, slots=True)
class Message:
    """A valid frame from a device. ``seq`` is the device's own sequence number and
    ``time_ms`` the device clock (ms since the Unix epoch, UTC)."""

    device: str
    seq: int
    time_ms: int


# -- replies and link-level messages (they do not advance the device seq) -------------
@dataclass(frozen=True, slots=True)
class Hello(Message):
    """The device's answer to the host's version handshake. ``seq`` is its last event seq."""

    version: int
    model: str
    firmware: str
    info: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sent periodically; ``seq`` is the device's last event seq, so a lost event shows."""

    status: str


@dataclass(frozen=True, slots=True)
class Ack(Message):
    ref: int  # the host command's seq


@dataclass(frozen=True, slots=True)
class Nak(Message):
    ref: int
    code: str
    text: str


# -- events (each advances the device seq by one) -----------------------------------
@dataclass(frozen=True, slots=True)
class Event(Message):
    """Something that happened at the device. Subclasses name the contract event."""

    event: ClassVar[str] = "event"

    def data(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, slots=True)
class Jam(Event):
    event: ClassVar[str] = "jam"


@dataclass(frozen=True, slots=True)
class JamCleared(Event):
    event: ClassVar[str] = "jam_cleared"


# -- commands (host -> device) --------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Command:
    """A host request. The codec stamps it with the host's own command seq."""

    name: ClassVar[str] = "command"


@dataclass(frozen=True, slots=True)
class HelloCommand(Command):
    name: ClassVar[str] = "hello"
    version: int = 1


@dataclass(frozen=True, slots=True)
class ResendCommand(Command):
    """Ask the device to send its event frames again from ``from_seq`` (its resend buffer)."""

    name: ClassVar[str] = "resend"
    from_seq: int = 1


@dataclass(frozen=True, slots=True)
class ShuffleCommand(Command):
    name: ClassVar[str] = "shuffle"


@dataclass(frozen=True, slots=True)
class EjectCommand(Command):
    name: ClassVar[str] = "eject"


class Codec(ABC):
    """One device protocol. Instances hold only the partial-frame buffer (one per port)."""

    protocol: ClassVar[str]
    """Registry name, e.g. ``sdl1-shoe``; config selects it with ``options.protocol``."""
    kind: ClassVar[str]
    """Device kind this codec speaks for: ``shoe``, ``shuffler`` or ``cutcard``."""
    version: ClassVar[int] = 1
    device_clock: ClassVar[bool] = True
    """Whether ``time_ms`` is the device's own clock (else the host's on arrival)."""
    cards_name_shoe: ClassVar[bool] = True
    """Shoe codecs: whether a card frame names its shoe. Else the codec sends each card
    with the shoe ``unknown`` and the shoe driver stamps it with the shoe of the last load
    it published, in the device's order (see ``drivers/shoe.py``)."""
    seq_modulus: ClassVar[int | None] = None
    """Whether the device's seq field wraps, and at what (ACME-STX: 1,000,000): a count below
    the old one close past the wrap may be the device counting on, checked before the
    driver takes it for a numbering restart. None: a seq that never wraps (SDL/1)."""

    def __init__(self, host_id: str = "host") -> None:
        self.host_id = host_id

    @abstractmethod
    def feed(self, data: bytes) -> list[Message | FrameError]:
        """Consume bytes; return every complete message or error found so far."""

    @abstractmethod
    def encode(self, command: Command, seq: int, time_ms: int) -> bytes:
        """The bytes of one host command; raise ``ProtocolError`` if this device has no such command."""

    @abstractmethod
    def reset(self) -> None:
        """Forget any partial frame (after a reconnect)."""

    def fingerprint(self, event: Event) -> str:
        """What the device sent for ``event``, seq aside: the same frame sent again (a
        ``RESEND`` from the device's buffer) gives the same text, another event under the
        same seq (a device that restarted its numbering) another. A driver restarted with
        saved state compares the two to tell a device that rebooted while it was down.

        Only what is on the wire may count: a codec that stamps frames itself (no device
        clock) or fills fields from earlier frames must leave those out (see
        ``acme_stx_shoe``).
        """
        fields = json.dumps(event.data(), sort_keys=True, default=str)
        return f"{type(event).__name__}|{event.time_ms}|{fields}"

    def unstamped(self, fingerprint: str) -> str:
        """``fingerprint`` without the device time: what tells one event from another.

        A device that re-encodes the events it resends with its clock's time then (docs say
        to resend the stored frame unchanged, docs/devices.md 1.4) sends each again under
        its seq with another time: the same event. Taken for another, each resend read as a
        numbering restart, whose confirming ``RESEND`` was answered re-stamped again, and the
        driver published the whole buffer again and again (a docs-only device review). A
        restart's new event under a reused seq is another event (another card, shoe or
        serial): one with the same type and fields is told by the device's counts, and a
        numbering check compares several events. Fingerprints of the format above (saved
        states included) lose their time; any other (a codec's own, with no device time)
        is returned whole."""
        kind, _, rest = fingerprint.partition("|")
        stamp, sep, fields = rest.partition("|")
        if sep and stamp.isdigit():
            return f"{kind}|{fields}"
        return fingerprint
