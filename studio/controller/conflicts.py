"""Which event each device sent under its recent seqs, so that a duplicate that is another
event is told: a device whose numbering went back below what the log holds (a device reset
whose driver lost its state) has every event it sends under a logged seq dropped as a
duplicate, the card it dealt with them, and before, without a word."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

# Seqs remembered per device: a driver's replay buffer (4,096 events by default) is as far
# back as a genuine re-send reaches. A duplicate further back than that is a conflict too.
KEPT = 4096


def identity(kind: str, payload: dict[str, Any]) -> str:
    """What the event says, without its seq and time (a re-send may carry another corrected
    time for the same event), nor a card's shoe: a shoe whose card frames name none
    (ACME-STX) has it stamped by its driver, which after a crash may not know it again
    (``unknown``) when it re-sends the card (a review)."""
    left_out = ("device", "seq", "ts", "shoe") if kind == "shoe.card" else ("device", "seq", "ts")
    fields = {k: v for k, v in payload.items() if k not in left_out}
    return f"{kind} {json.dumps(fields, sort_keys=True, separators=(',', ':'))}"


class EventIdentities:
    """Per table and device, the identity of the event under each of its last ``kept`` seqs."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._seen: dict[tuple[str, str], OrderedDict[int, str]] = {}

    def record(self, table: str, device: str, seq: int, event: str) -> None:
        seen = self._seen.setdefault((table, device), OrderedDict())
        seen[seq] = event
        seen.move_to_end(seq)
        while len(seen) > self.kept:
            seen.popitem(last=False)

    def forget(self, table: str, device: str, seq: int) -> None:
        self._seen.get((table, device), OrderedDict()).pop(seq, None)

    def conflict(
        self, table: str, device: str, seq: int, event: str, contiguous: int
    ) -> tuple[bool, str | None]:
        """Is ``event``, a duplicate of ``seq``, another event than the one taken under it?
        Returns (conflict, what was taken: None when no longer remembered)."""
        taken = self._seen.get((table, device), OrderedDict()).get(seq)
        if taken is not None:
            return taken != event, taken
        # Not remembered: beyond what any driver re-sends, or a seq given up as lost.
        return seq <= contiguous - self.kept, None
