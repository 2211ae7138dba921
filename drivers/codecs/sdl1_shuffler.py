"""SDL/1 automatic counting shuffler protocol (``sdl1-shuffler``).

Device -> host events::

    SHUF,<cards-in>                       shuffle started
    DONE,<count>,<census>                 shuffle complete; census "A:32;2:32;...;T:32;...;K:32"
                                          (the ten as T or 10)
    ERR,E40,<expected>,<counted>          count mismatch: cards missing
    ERR,E41,<expected>,<counted>          count mismatch: extra cards
    ERR,E42,<expected>,<counted>,<what>   count mismatch: foreign card(s)
    ERR,E43 / CLR,E43                     jam / cleared
    ERR,E44 / CLR,E44                     door open / closed
    READY                                 ready for cards / for a command
    EJECT,<count>                         shuffled cards ejected

Host -> device commands: ``SHUFFLE`` (start shuffle), ``EJECT``; answered ACK or NAK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.codecs.base import Event, Jam, JamCleared, parse_count
from drivers.codecs.sdl1 import RawFrame, SDL1Codec
from drivers.codecs.sdl1 import fields_between as _fields
from studio.cards import RANKS


@dataclass(frozen=True, slots=True)
class ShuffleStarted(Event):
    event: ClassVar[str] = "shuffle_started"
    cards_in: int

    def data(self) -> dict[str, Any]:
        return {"cards_in": self.cards_in}


@dataclass(frozen=True, slots=True)
class ShuffleComplete(Event):
    event: ClassVar[str] = "shuffle_complete"
    count: int
    census: dict[str, int]

    def data(self) -> dict[str, Any]:
        return {"count": self.count, "census": dict(self.census)}


@dataclass(frozen=True, slots=True)
class CountMismatch(Event):
    event: ClassVar[str] = "count_mismatch"
    kind: str  # missing | extra | foreign
    expected: int
    counted: int
    detail: str = ""

    def data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "expected": self.expected,
            "counted": self.counted,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class DoorOpen(Event):
    event: ClassVar[str] = "door_open"


@dataclass(frozen=True, slots=True)
class DoorClosed(Event):
    event: ClassVar[str] = "door_closed"


@dataclass(frozen=True, slots=True)
class Ready(Event):
    event: ClassVar[str] = "ready"


@dataclass(frozen=True, slots=True)
class Ejected(Event):
    event: ClassVar[str] = "ejected"
    count: int

    def data(self) -> dict[str, Any]:
        return {"count": self.count}


def _common(raw: RawFrame, least: int = 0, most: int = 0) -> tuple[str, int, int]:
    """The fields every event has; the frame refused (``malformed``) unless it has
    ``least`` to ``most`` fields: until 2026-12-06 a field beyond the grammar was ignored
    (``SHUF,416,9999`` decoded as sound; a review)."""
    _fields(raw, least, most)
    return raw.device, raw.seq, raw.time_ms


def parse_census(text: str) -> dict[str, int]:
    """``A:32;2:32;...;K:32``: each of the 13 ranks once, in any order, upper case; the ten
    as ``T`` or ``10`` (as card codes take ``10H`` for ``TH``), published as ``T``. Until
    2026-12-07 ``10`` was refused: a shuffler writing ``10:32`` had every ``DONE``
    malformed, and each shoe it filled was put out of play unverified (a docs-only device
    review)."""
    census: dict[str, int] = {}
    for item in text.split(";"):
        rank, _, count = item.partition(":")
        if rank == "10":
            rank = "T"
        if rank not in RANKS or len(rank) != 1 or rank in census:
            raise ValueError(f"bad census rank {rank!r}")
        census[rank] = parse_count(count)
    if set(census) != set(RANKS):
        raise ValueError("census must list all 13 ranks")
    return census


def _done(raw: RawFrame) -> ShuffleComplete:
    common = _common(raw, 2, 2)
    count = parse_count(raw.fields[0])
    census = parse_census(raw.fields[1])
    if sum(census.values()) != count:
        raise ValueError(f"census sums to {sum(census.values())}, count says {count}")
    return ShuffleComplete(*common, count=count, census=census)


def _mismatch(kind: str, most: int) -> Any:
    def parse(raw: RawFrame) -> CountMismatch:
        f = raw.fields
        return CountMismatch(
            *_common(raw, 3, most),
            kind=kind,
            expected=parse_count(f[1]),
            counted=parse_count(f[2]),
            detail=f[3] if len(f) > 3 else "",
        )

    return parse


class ShufflerCodec(SDL1Codec):
    protocol: ClassVar[str] = "sdl1-shuffler"
    kind: ClassVar[str] = "shuffler"
    parsers: ClassVar = {
        "SHUF": lambda r: ShuffleStarted(*_common(r, 1, 1), cards_in=parse_count(r.fields[0])),
        "DONE": _done,
        "READY": lambda r: Ready(*_common(r)),
        "EJECT": lambda r: Ejected(*_common(r, 1, 1), count=parse_count(r.fields[0])),
    }
    # ERR/CLR fields: the code first. E42 names what was foreign (taken without it, as
    # before); E40/E41 carry no more than the two counts.
    faults: ClassVar = {
        "E40": (_mismatch("missing", 3), None),
        "E41": (_mismatch("extra", 3), None),
        "E42": (_mismatch("foreign", 4), None),
        "E43": (lambda r: Jam(*_common(r, 1, 1)), lambda r: JamCleared(*_common(r, 1, 1))),
        "E44": (lambda r: DoorOpen(*_common(r, 1, 1)), lambda r: DoorClosed(*_common(r, 1, 1))),
    }
    commands: ClassVar = {"shuffle": "SHUFFLE", "eject": "EJECT"}
