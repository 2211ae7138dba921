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


def _common(raw: RawFrame) -> tuple[str, int, int]:
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
            lambda r: SensorFault(*_common(r), detail=r.fields[1] if len(r.fields) > 1 else ""),
            lambda r: SensorOk(*_common(r)),
        ),
    }
