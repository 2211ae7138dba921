"""A simulated card-shoe scanner (protocol ``sdl1-shoe``)."""

from __future__ import annotations

from typing import Any, ClassVar

from hwsim.device import SimDevice
from studio.cards import Card
from studio.errors import DeviceError

DEAL_FAULTS = ("misread", "double_pull", "wrong_order")


class SimShoe(SimDevice):
    kind: ClassVar[str] = "shoe"
    model: ClassVar[str] = "SIM-SHOE-8"

    def __init__(self, device_id: str, *args: Any, barcoded: bool = False, **kwargs: Any) -> None:
        super().__init__(device_id, *args, **kwargs)
        self.barcoded = barcoded
        self.shoe_id = ""
        self.cards: list[Card] = []
        self.position = 0
        self.jammed = False
        self.lid_open = False
        self.dealt: list[Card] = []

    def status(self) -> str:
        if self.jammed:
            return "JAM"
        if self.lid_open:
            return "LID"
        if self.shoe_id and self.remaining == 0:
            return "EMPTY"
        return "OK"

    def hello_info(self) -> list[str]:
        return [f"shoe={self.shoe_id}"] if self.shoe_id else []

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.position

    def load(self, shoe_id: str, cards: list[Card], decks: int) -> None:
        self.shoe_id = shoe_id
        self.cards = list(cards)
        self.position = 0
        self.emit("SHOE", shoe_id, str(decks))

    def _serial(self, index: int) -> str:
        return f"{self.shoe_id}-{index:04d}" if self.barcoded else ""

    def _pull(self) -> tuple[int, Card]:
        index = self.position
        self.position += 1
        self.dealt.append(self.cards[index])
        return index, self.cards[index]

    def _card_frame(self, index: int, card: Card) -> None:
        fields = [card.code, self.shoe_id]
        if self.barcoded:
            fields.append(self._serial(index))
        self.emit("CARD", *fields)

    def deal(self, fault: str | None = None) -> list[Card]:
        """The dealer draws a card. ``fault``: misread, double_pull or wrong_order.

        Returns the cards that physically left the shoe (a misread card left too).
        """
        if self.jammed:
            raise DeviceError(f"{self.device_id} is jammed")
        if fault is not None and fault not in DEAL_FAULTS:
            raise DeviceError(f"unknown deal fault {fault!r}; known: {', '.join(DEAL_FAULTS)}")
        if not self.shoe_id:
            raise DeviceError(f"{self.device_id} has no shoe loaded")
        if self.remaining == 0:
            self.emit("ERR", "E32")
            return []
        if fault == "wrong_order" and self.remaining >= 2:
            # The next two cards come out swapped (a card stuck, a mis-stacked shoe).
            i = self.position
            self.cards[i], self.cards[i + 1] = self.cards[i + 1], self.cards[i]
        out = []
        if fault == "misread":
            self._pull()
            self.emit("ERR", "E30")
            out.append(self.dealt[-1])
        elif fault == "double_pull" and self.remaining >= 2:
            self.emit("ERR", "E31")
            for _ in range(2):
                index, card = self._pull()
                self._card_frame(index, card)
                out.append(card)
        else:
            index, card = self._pull()
            self._card_frame(index, card)
            out.append(card)
        if self.remaining == 0:
            # However the last card left (a misread or a double pull too), the shoe says so.
            self.emit("ERR", "E32")
        return out

    def jam(self) -> None:
        self.jammed = True
        self.emit("ERR", "E33")

    def clear_jam(self) -> None:
        self.jammed = False
        self.emit("CLR", "E33")

    def open_lid(self) -> None:
        self.lid_open = True
        self.emit("ERR", "E34")

    def close_lid(self) -> None:
        self.lid_open = False
        self.emit("CLR", "E34")
