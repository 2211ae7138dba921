"""Cut-card sensor driver: events on ``cutcard/events``."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from drivers.codecs import Event
from drivers.device import DeviceDriver, Publication


class CutCardDriver(DeviceDriver):
    kind: ClassVar[str] = "cutcard"

    def publication(self, event: Event, seq: int, ts: datetime) -> Publication:
        # cut_card_detected, cut_card_cleared, sensor_fault {detail}, sensor_ok
        return self._device_event(self.topics.cutcard_events, event, seq, ts)
