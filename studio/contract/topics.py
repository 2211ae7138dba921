"""Every MQTT topic of contract v1, built in one place."""

from __future__ import annotations

import re
from dataclasses import dataclass

from studio.errors import BusError

PREFIX = "studio/v1"
# A table's or device's id: one topic segment. The controller holds payloads' ``device``
# to it too, where it takes them off the wire (it asks a device for replays on a topic
# named by it: an id that was no segment made that ask raise; a pentest, 2026-12-07).
SEGMENT_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
_SEGMENT = re.compile(SEGMENT_PATTERN)


def is_segment(value: str) -> bool:
    """Whether ``value`` can be a topic segment (a table's or a device's id)."""
    return _SEGMENT.match(value) is not None


def _segment(value: str, what: str) -> str:
    if not _SEGMENT.match(value):
        raise BusError(f"{what} {value!r} cannot be a topic segment (letters, digits, _ . - only)")
    return value


@dataclass(frozen=True, slots=True)
class Topics:
    """The topics of one table (``table="+"`` gives subscription filters for every table)."""

    table: str
    prefix: str = PREFIX

    def __post_init__(self) -> None:
        if self.table != "+":
            _segment(self.table, "table id")

    @property
    def base(self) -> str:
        return f"{self.prefix}/tables/{self.table}"

    def _device(self, device: str) -> str:
        return f"{self.base}/devices/{device if device == '+' else _segment(device, 'device id')}"

    # Device inputs
    @property
    def shoe_cards(self) -> str:
        return f"{self.base}/shoe/cards"

    @property
    def camera_cards(self) -> str:
        return f"{self.base}/camera/cards"

    @property
    def shuffler_events(self) -> str:
        return f"{self.base}/shuffler/events"

    @property
    def cutcard_events(self) -> str:
        return f"{self.base}/cutcard/events"

    @property
    def shoe_events(self) -> str:
        """Shoe events other than cards: shoe loaded, misread, double pull, empty, jam, tamper."""
        return f"{self.base}/shoe/events"

    def availability(self, device: str) -> str:
        return f"{self._device(device)}/availability"

    def health(self, device: str) -> str:
        return f"{self._device(device)}/health"

    def replay(self, device: str) -> str:
        """Consumers ask a device's driver to publish again from a seq (gap repair)."""
        return f"{self._device(device)}/replay"

    def commands(self, device: str) -> str:
        """Commands to a device (shuffler: start shuffle, eject)."""
        return f"{self._device(device)}/commands"

    # Controller outputs
    @property
    def round_state(self) -> str:
        return f"{self.base}/round/state"

    @property
    def round_events(self) -> str:
        return f"{self.base}/round/events"

    @property
    def alerts(self) -> str:
        return f"{self.base}/alerts"

    @property
    def dealer_prompt(self) -> str:
        return f"{self.base}/dealer/prompt"

    # The controller's own
    def numbering_check(self, marker: str) -> str:
        """A controller start's marker (``{}``, not retained; ``#`` gives the filter of
        them all), published once its subscriptions to the tables' retained ``round/state``
        are acknowledged and read back by it alone: brokers send the retained messages
        first, so its return says they have all come (studio.controller.numbering)."""
        if marker not in ("+", "#"):
            _segment(marker, "marker")
        return f"{self.base}/controller/numbering_check/{marker}"

    # Game platform input
    @property
    def game_commands(self) -> str:
        return f"{self.base}/game/commands"

    @property
    def command_errors(self) -> str:
        """The controller's answer to a game command it could not read (not validated)."""
        return f"{self.base}/game/command_errors"


def controller_availability(client_id: str, prefix: str = PREFIX) -> str:
    """The controller's own availability, by its MQTT client id (``{client_id_prefix}-controller``):
    retained ``online`` while it runs, ``offline`` at a clean stop and, as its last will, when
    it dies. A dealer's display that reads the retained ``dealer/prompt`` tells by it a prompt
    of a live controller from the last one of a dead controller."""
    return f"{prefix}/controllers/{_segment(client_id, 'client id')}/availability"


def table_of(topic: str) -> str:
    """The table id inside a contract topic; raise :class:`BusError` if it is not one."""
    parts = topic.split("/")
    if len(parts) < 4 or "/".join(parts[:2]) != PREFIX or parts[2] != "tables":
        raise BusError(f"not a studio/v1 table topic: {topic!r}")
    return parts[3]


def device_of(topic: str) -> str:
    """The device id inside a ``.../devices/{device}/...`` topic."""
    parts = topic.split("/")
    try:
        return parts[parts.index("devices") + 1]
    except (ValueError, IndexError) as exc:
        raise BusError(f"not a device topic: {topic!r}") from exc
