"""Card-shoe scanner driver: cards on ``shoe/cards``, everything else on ``shoe/events``."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from drivers.codecs import Event
from drivers.codecs.sdl1_shoe import CardDrawn
from drivers.device import DeviceDriver, Publication
from studio.contract import ShoeCard


class ShoeDriver(DeviceDriver):
    kind: ClassVar[str] = "shoe"

    def publication(self, event: Event, seq: int, ts: datetime) -> Publication:
        if isinstance(event, CardDrawn):
            return Publication(
                self.topics.shoe_cards,
                ShoeCard(
                    device=self.device_id,
                    seq=seq,
                    ts=ts,
                    card=event.card.code,
                    shoe=event.shoe,
                    serial=event.serial,
                ),
            )
        # shoe_loaded, misread, double_pull, shoe_empty, jam(_cleared), tamper(_cleared)
        return self._device_event(self.topics.shoe_events, event, seq, ts)
