"""SDL/1 cut-card sensor protocol (``sdl1-cutcard``).

Device -> host events::

    CUT                  the cut card came out of the shoe
    CLEAR                the cut card was removed (sensor clear)
    ERR,E50[,<text>]     sensor fault
    CLR,E50              sensor fault cleared
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.codecs.base import Event
from drivers.codecs.sdl1 import RawFrame, SDL1Codec
from drivers.codecs.sdl1 import fields_between as _fields


@dataclass(frozen=True, slots=True)
class CutCardDetected(Event):
    event: ClassVar[str] = "cut_card_detected"


@dataclass(frozen=True, slots=True)
class CutCardCleared(Event):
    event: ClassVar[str] = "cut_card_cleared"


@dataclass(frozen=True, slots=True)
class SensorFault(Event):
    event: ClassVar[str] = "sensor_fault"
    detail: str = ""

    def data(self) -> dict[str, Any]:
        return {"detail": self.detail}


@dataclass(frozen=True, slots=True)
class SensorOk(Event):
    event: ClassVar[str] = "sensor_ok"


def _common(raw: RawFrame, least: int = 0, most: int = 0) -> tuple[str, int, int]:
    """The fields every event has; the frame refused (``malformed``) unless it has
    ``least`` to ``most`` fields: until 2026-12-06 a field beyond the grammar was ignored
    (``CUT,junk`` decoded as a cut card; a review)."""
    _fields(raw, least, most)
    return raw.device, raw.seq, raw.time_ms


class CutCardCodec(SDL1Codec):
    protocol: ClassVar[str] = "sdl1-cutcard"
    kind: ClassVar[str] = "cutcard"
    parsers: ClassVar = {
        "CUT": lambda r: CutCardDetected(*_common(r)),
        "CLEAR": lambda r: CutCardCleared(*_common(r)),
    }
    faults: ClassVar = {
        "E50": (
            lambda r: SensorFault(
                *_common(r, 1, 2), detail=r.fields[1] if len(r.fields) > 1 else ""
            ),
            lambda r: SensorOk(*_common(r, 1, 1)),
        ),
    }
