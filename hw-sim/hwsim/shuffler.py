"""A simulated automatic counting shuffler (protocol ``sdl1-shuffler``)."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from hwsim.device import SimDevice
from hwsim.framing import HostFrame
from studio.cards import RANKS, Card

COUNT_FAULTS = ("missing_card", "extra_card", "foreign_card")


class SimShuffler(SimDevice):
    kind: ClassVar[str] = "shuffler"
    model: ClassVar[str] = "SIM-SHUF-2"

    def __init__(
        self, device_id: str, *args: Any, rng: random.Random | None = None, **kwargs: Any
    ) -> None:
        super().__init__(device_id, *args, **kwargs)
        self.rng = rng or random.Random(0)
        self.loaded: list[Card] = []  # cards in the input tray
        self.shuffled: list[Card] = []  # shuffled, waiting to be ejected
        self.expected = 0
        self.armed_fault: str | None = None
        self.jammed = False
        self.door_open = False
        self.busy = False
        self.shuffle_time = 0.0
        self.on_eject: Callable[[list[Card]], None] | None = None
        self.shuffles = 0

    def status(self) -> str:
        if self.jammed:
            return "JAM"
        if self.door_open:
            return "DOOR"
        return "BUSY" if self.busy else "READY"

    def put(self, cards: list[Card], expected: int | None = None) -> None:
        """Cards go into the input tray; ``expected`` is what the studio thinks it put in."""
        self.loaded.extend(cards)
        self.expected = expected if expected is not None else len(self.loaded)

    def arm(self, fault: str) -> None:
        """The next shuffle counts wrong: missing_card, extra_card or foreign_card."""
        if fault not in COUNT_FAULTS:
            raise ValueError(f"unknown count fault {fault!r}; known: {', '.join(COUNT_FAULTS)}")
        self.armed_fault = fault

    def can_run(self) -> str | None:
        """Why a command is refused now (``NAK E06``), else None; a busy shuffler is E05."""
        if self.jammed:
            return "jammed"
        if self.door_open:
            return "door open"
        return None

    def shuffle(self) -> bool:
        """Shuffle the tray; return False (and report) if the count is wrong."""
        self.busy = True
        cards = list(self.loaded)
        self.loaded = []
        self.emit("SHUF", str(len(cards)))
        fault, self.armed_fault = self.armed_fault, None
        expected = self.expected
        foreign = 0
        if fault == "missing_card" and cards:
            cards.pop(self.rng.randrange(len(cards)))
        elif fault == "extra_card" and cards:
            cards.append(self.rng.choice(cards))
        elif fault == "foreign_card":
            foreign = 1
        self.rng.shuffle(cards)
        self.shuffles += 1
        counted = len(cards) + foreign
        self.busy = False
        if foreign:
            self.emit("ERR", "E42", str(expected), str(counted), f"{foreign} foreign card")
            self.loaded = cards
            self.emit("READY")
            return False
        if counted != expected:
            self.emit("ERR", "E40" if counted < expected else "E41", str(expected), str(counted))
            self.loaded = cards
            self.emit("READY")
            return False
        census = Counter(card.rank for card in cards)
        self.emit("DONE", str(len(cards)), ";".join(f"{r}:{census.get(r, 0)}" for r in RANKS))
        self.shuffled = cards
        self.emit("READY")
        return True

    def eject(self) -> list[Card]:
        cards, self.shuffled = self.shuffled, []
        self.emit("EJECT", str(len(cards)))
        if self.on_eject is not None and cards:
            self.on_eject(cards)
        return cards

    def jam(self) -> None:
        self.jammed = True
        self.emit("ERR", "E43")

    def clear_jam(self) -> None:
        self.jammed = False
        self.emit("CLR", "E43")

    def open_door(self) -> None:
        self.door_open = True
        self.emit("ERR", "E44")

    def close_door(self) -> None:
        self.door_open = False
        self.emit("CLR", "E44")

    def on_command(self, f: HostFrame) -> bool:
        if f.type not in ("SHUFFLE", "EJECT"):
            return False
        if self.busy:
            self.reply("NAK", str(f.seq), "E05", "busy")
            return True
        why = self.can_run()
        if why is not None:
            self.reply("NAK", str(f.seq), "E06", why)
            return True
        if f.type == "SHUFFLE" and not self.loaded:
            self.reply("NAK", str(f.seq), "E06", "input tray empty")
            return True
        self.reply("ACK", str(f.seq))
        if f.type == "SHUFFLE":
            # Busy from the ACK on: a second SHUFFLE before this one ran would find the tray
            # empty and report every card missing (E40).
            self.busy = True
            asyncio.get_running_loop().call_later(self.shuffle_time, self.shuffle)
        else:
            self.eject()
        return True
