"""Counting-shuffler driver: events on ``shuffler/events``; accepts ``shuffle`` and ``eject``."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from drivers.codecs import Command, EjectCommand, Event, ShuffleCommand
from drivers.device import DeviceDriver, Publication


class ShufflerDriver(DeviceDriver):
    kind: ClassVar[str] = "shuffler"
    commands: ClassVar[dict[str, type[Command]]] = {
        "shuffle": ShuffleCommand,
        "eject": EjectCommand,
    }

    def publication(self, event: Event, seq: int, ts: datetime) -> Publication:
        # shuffle_started, shuffle_complete {count, census}, count_mismatch {kind, ...},
        # jam(_cleared), door_open/door_closed, ready, ejected {count}
        return self._device_event(self.topics.shuffler_events, event, seq, ts)
