"""A table rebuilt from its event log: the table itself and the device seqs its logged
inputs account for. A start builds one per table (from the table's checkpoint, if any, and
the inputs logged after it); so does a checkpoint, in the background; so does a table that
must forget a half-applied input."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from studio.bus import SequenceTracker, SeqVerdict
from studio.controller.conflicts import EventIdentities, identity
from studio.controller.table import Input, TableController
from studio.errors import StudioError
from studio.store import LogRecord

_LOGGER = logging.getLogger(__name__)

HEALTH_SUFFIX = "#health"
# Device events the table must take in the device's order (a shoe's cards go to targets in
# the order they are drawn). A camera's sightings are paired by card and zone, not order,
# and a camera answers no replay: holding them would only make them late.
ORDERED_KINDS = {"shoe.card", "shoe.event", "shuffler.event", "cutcard.event"}
# What a game command logged again under an id its table had taken replays as.
REPEATED_COMMAND = "game.command.repeated"


def repeated(record: LogRecord, firsts: dict[str, int]) -> bool:
    """Is ``record`` a game command logged again under an id taken before? ``firsts``: the
    record of each id's first command (GameCommands.first_records)."""
    if record.kind != "game.command":
        return False
    first = firsts.get(str(record.payload.get("id")))
    return first is not None and first < record.id


def seqs_of(kind: str, payload: dict[str, Any]) -> list[tuple[str, int]]:
    """The (source, seq) pairs an input accounts for in the sequence trackers."""
    device, seq = payload.get("device"), payload.get("seq")
    if not isinstance(device, str):
        return []
    if kind == "device.gap":
        return [(device, int(lost)) for lost in payload.get("seqs", [])]
    if kind == "device.conflict":
        return []  # about a seq already seen, not a new one
    if not isinstance(seq, int):
        return []
    # One sequence space per device for its events (a device numbers all its frames
    # together); health reports have their own, time-based one (docs/devices.md).
    return [(f"{device}{HEALTH_SUFFIX}" if kind == "device.health" else device, seq)]


def observe_seqs(
    tracker: SequenceTracker,
    identities: EventIdentities,
    table_id: str,
    kind: str,
    payload: dict[str, Any],
) -> SeqVerdict | None:
    """Account for an input's seqs: seen, and (an ordered device event) what it said."""
    if kind == "device.gap" and payload.get("skipped"):
        tracker.skip(str(payload["device"]), int(payload["skipped"][1]))
    verdict = None
    for source, seq in seqs_of(kind, payload):
        verdict = tracker.observe(source, seq)
        if verdict is SeqVerdict.FRESH and kind in ORDERED_KINDS:
            identities.record(table_id, source, seq, identity(kind, payload))
    # Given up for lost (device.gap): seen, so nobody asks for them again (after a restart too).
    return None if kind == "device.gap" else verdict


@dataclass
class TableReplay:
    """One table as replaying its logged inputs, up to record ``through``, built it."""

    table: TableController
    tracker: SequenceTracker = field(default_factory=SequenceTracker)
    identities: EventIdentities = field(default_factory=EventIdentities)
    # The log record it stands at (0: none): the last input applied, or a later record
    # walked with no input of the table between (an idle table's checkpoint moves up with
    # the log, so that a start does not walk the chain from far back for it).
    through: int = 0

    def apply(self, record: LogRecord, *, repeat: bool = False) -> None:
        """Apply a logged input (``repeat``: a game command logged again, see
        :func:`repeated`, which is not taken again)."""
        observe_seqs(self.tracker, self.identities, record.table_id, record.kind, record.payload)
        ts = datetime.fromisoformat(record.ts)
        kind = REPEATED_COMMAND if repeat else record.kind
        try:
            self.table.handle(Input(kind, record.payload, ts))
        except StudioError as exc:  # a logged input must replay; say so loudly if not
            _LOGGER.error("replay of record %d failed: %s", record.id, exc)
        self.through = record.id
