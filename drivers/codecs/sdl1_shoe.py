"""SDL/1 card-shoe scanner protocol (``sdl1-shoe``). Grammar in ``docs/devices.md``.

Device -> host events (each advances the device seq)::

    SHOE,<shoe-id>,<decks>            a shoe was loaded
    CARD,<card>,<shoe-id>[,<serial>]  a card was drawn and read ("QH", "TS")
    ERR,E30                           misread: card pulled but not read
    ERR,E31                           double pull (the cards read follow as CARD)
    ERR,E32                           shoe empty
    ERR,E33 / CLR,E33                 jam / jam cleared
    ERR,E34 / CLR,E34                 tamper: lid open / lid closed
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.codecs.base import (
    Event,
    Jam,
    JamCleared,
    check_shoe_id,
    parse_decks,
    parse_wire_card,
)
from drivers.codecs.sdl1 import RawFrame, SDL1Codec
from drivers.codecs.sdl1 import fields_between as _fields
from studio.cards import Card


@dataclass(frozen=True, slots=True)
class ShoeLoaded(Event):
    event: ClassVar[str] = "shoe_loaded"
    shoe: str
    decks: int

    def data(self) -> dict[str, Any]:
        return {"shoe": self.shoe, "decks": self.decks}


@dataclass(frozen=True, slots=True)
class CardDrawn(Event):
    event: ClassVar[str] = "card"
    card: Card
    shoe: str
    serial: str | None = None

    def data(self) -> dict[str, Any]:
        return {"card": self.card.code, "shoe": self.shoe, "serial": self.serial}


@dataclass(frozen=True, slots=True)
class Misread(Event):
    event: ClassVar[str] = "misread"


@dataclass(frozen=True, slots=True)
class DoublePull(Event):
    event: ClassVar[str] = "double_pull"


@dataclass(frozen=True, slots=True)
class ShoeEmpty(Event):
    event: ClassVar[str] = "shoe_empty"


@dataclass(frozen=True, slots=True)
class Tamper(Event):
    event: ClassVar[str] = "tamper"

    def data(self) -> dict[str, Any]:
        return {"lid": "open"}


@dataclass(frozen=True, slots=True)
class TamperCleared(Event):
    event: ClassVar[str] = "tamper_cleared"

    def data(self) -> dict[str, Any]:
        return {"lid": "closed"}


def _common(raw: RawFrame) -> tuple[str, int, int]:
    return raw.device, raw.seq, raw.time_ms


def _bare(raw: RawFrame) -> tuple[str, int, int]:
    """An ``ERR``/``CLR`` frame that carries its code only."""
    _fields(raw, 1, 1)
    return _common(raw)


def _card(raw: RawFrame) -> CardDrawn:
    f = _fields(raw, 2, 3)
    serial = f[2] if len(f) > 2 else ""
    if serial and not serial.strip():
        raise ValueError("a serial of only spaces")
    return CardDrawn(
        *_common(raw),
        card=parse_wire_card(f[0]),
        shoe=check_shoe_id(f[1]),
        serial=serial or None,
    )


def _shoe(raw: RawFrame) -> ShoeLoaded:
    f = _fields(raw, 2, 2)
    return ShoeLoaded(*_common(raw), shoe=check_shoe_id(f[0]), decks=parse_decks(f[1]))


class ShoeCodec(SDL1Codec):
    protocol: ClassVar[str] = "sdl1-shoe"
    kind: ClassVar[str] = "shoe"
    parsers: ClassVar = {"CARD": _card, "SHOE": _shoe}
    faults: ClassVar = {
        "E30": (lambda r: Misread(*_bare(r)), None),
        "E31": (lambda r: DoublePull(*_bare(r)), None),
        "E32": (lambda r: ShoeEmpty(*_bare(r)), None),
        "E33": (lambda r: Jam(*_bare(r)), lambda r: JamCleared(*_bare(r))),
        "E34": (lambda r: Tamper(*_bare(r)), lambda r: TamperCleared(*_bare(r))),
    }
