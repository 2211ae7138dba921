"""A simulated cut-card sensor (protocol ``sdl1-cutcard``)."""

from __future__ import annotations

from typing import Any, ClassVar

from hwsim.device import SimDevice


class SimCutCard(SimDevice):
    kind: ClassVar[str] = "cutcard"
    model: ClassVar[str] = "SIM-CUT-1"

    def __init__(self, device_id: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(device_id, *args, **kwargs)
        self.cut_out = False
        self.faulty = False

    def status(self) -> str:
        return "FAULT" if self.faulty else ("CUT" if self.cut_out else "OK")

    def cut(self) -> None:
        self.cut_out = True
        self.emit("CUT")

    def clear(self) -> None:
        self.cut_out = False
        self.emit("CLEAR")

    def sensor_fault(self, detail: str = "optical sensor blocked") -> None:
        self.emit("ERR", "E50", detail)  # first: a detail SDL/1 cannot carry changes nothing
        self.faulty = True

    def sensor_ok(self) -> None:
        self.faulty = False
        self.emit("CLR", "E50")
