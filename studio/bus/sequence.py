"""De-duplication and gap detection by (source, seq).

QoS 1 is at-least-once and a replay after a reconnect re-sends events, so every
consumer runs incoming events through a :class:`SequenceTracker`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

# A device's seq this far ahead of what a consumer has is a jump of its numbering, not a
# hole to ask for: no driver keeps that many events to re-send (4,096 by default), and a
# driver that lost its state numbers from the Unix time in ms (docs/devices.md).
MAX_SEQ_JUMP = 10_000


class SeqVerdict(Enum):
    FRESH = "fresh"
    DUPLICATE = "duplicate"


@dataclass
class _SourceState:
    # Everything <= contiguous has been seen; ``ahead`` holds seen seqs above a gap;
    # ``highest`` is the highest seq ever observed (forgotten ones included).
    contiguous: int = 0
    ahead: set[int] = field(default_factory=set)
    highest: int = 0


@dataclass
class SequenceTracker:
    """Tracks, per source, which sequence numbers have been seen."""

    _sources: dict[str, _SourceState] = field(default_factory=dict)

    def observe(self, source: str, seq: int) -> SeqVerdict:
        state = self._sources.get(source)
        if state is None:
            # A consumer that joins mid-stream starts from the first seq it sees; what came
            # before it joined is not a gap (a restarted consumer calls restore() instead).
            self._sources[source] = _SourceState(contiguous=seq, highest=seq)
            return SeqVerdict.FRESH
        if seq <= state.contiguous or seq in state.ahead:
            return SeqVerdict.DUPLICATE
        state.highest = max(state.highest, seq)
        if seq == state.contiguous + 1:
            state.contiguous = seq
            while state.contiguous + 1 in state.ahead:
                state.contiguous += 1
                state.ahead.remove(state.contiguous)
        else:
            state.ahead.add(seq)
        return SeqVerdict.FRESH

    def missing(self, source: str, limit: int = 1000) -> list[int]:
        """Sequence numbers below the highest one seen that have not arrived yet (at most ``limit``)."""
        state = self._sources.get(source)
        if state is None:
            return []
        top = min(state.highest + 1, state.contiguous + 1 + limit)
        return [s for s in range(state.contiguous + 1, top) if s not in state.ahead]

    def forget(self, source: str, seq: int) -> None:
        """Un-see ``seq``: it was observed but not consumed (its write failed), so its next
        delivery is fresh, and until then it is missing like any other gap."""
        state = self._sources.get(source)
        if state is None:
            return
        if seq in state.ahead:
            state.ahead.remove(seq)
        elif seq <= state.contiguous:
            # Rare (forget follows its observe at once): what lay between stays seen.
            state.ahead.update(range(seq + 1, state.contiguous + 1))
            state.contiguous = seq - 1

    def skip(self, source: str, upto: int) -> None:
        """Take every seq up to ``upto`` as seen (a numbering that jumped past them: they are
        not waited for)."""
        state = self._sources.setdefault(source, _SourceState())
        if upto <= state.contiguous:
            return
        state.contiguous = upto
        state.highest = max(state.highest, upto)
        state.ahead = {s for s in state.ahead if s > upto}
        while state.contiguous + 1 in state.ahead:
            state.contiguous += 1
            state.ahead.remove(state.contiguous)

    def last_contiguous(self, source: str) -> int:
        state = self._sources.get(source)
        return 0 if state is None else state.contiguous

    def sources(self) -> list[str]:
        return sorted(self._sources)

    def restore(self, source: str, contiguous: int) -> None:
        """Start a source at ``contiguous`` (after rebuilding state from a log)."""
        self._sources[source] = _SourceState(contiguous=contiguous, highest=contiguous)
