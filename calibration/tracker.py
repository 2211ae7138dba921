"""Cards over time: publish each placement once, when it has settled; notice removals.

Every frame the recogniser's detector finds card quads; the tracker matches them to its
tracks by centre distance. A track is *settled* once its centre has stayed within
``move_tolerance`` card diagonals for ``settle_frames`` consecutive frames (one frame in
which the detector misses it does not break the run, two do); only then is the card
identified (a moving card is blurred and half-way between zones). If the reading is
unreadable, it is retried on the next settled frames, up to ``read_attempts``; then the
placement is published as unreadable. Either way a placement produces exactly one
``placed`` event.

Every frame is a new exposure (fresh sensor noise), so each retry is another chance for
a wrong look-alike to pass the threshold by luck. A retry's index reading is published
only when every earlier attempt's best guess named the same card; when the attempts
disagree the card is unreadable (a barcode, checked by its own code, is taken as it is).

A published track that is not seen for ``remove_frames`` consecutive frames produces one
``removed`` event (a hand passing over a card for a few frames does not). A published card
that is slid by more than ``relocate`` card diagonals is a new placement: ``removed`` for
the old position, then ``placed`` again once it settles.

:meth:`CardTracker.restore` lays down the cards published before a restart, so that a
card still lying there is not published a second time (see ``drivers.camera.service``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from calibration.detect import CardQuad, warp_card
from calibration.recogniser import Reading, Recogniser, covering

Image = NDArray[np.uint8]

# A card the detector misses for this many frames in a row keeps the stillness it had: in
# glare, next to a layout line as light as paper, a still card can be found in three
# frames of four, and would never settle.
FLICKER_FRAMES: Final = 1


@dataclass(frozen=True, slots=True)
class CardEvent:
    event: Literal["placed", "removed"]
    track: int
    reading: Reading
    zone: str | None
    zone_distance_mm: float | None
    quad: CardQuad
    frame: int


@dataclass(slots=True)
class _Track:
    id: int
    quad: CardQuad
    last_seen: int
    stable: int = 0
    missing: int = 0
    attempts: int = 0
    guesses: list[str] = field(default_factory=list)  # each attempt's best index guess
    disagreement: str | None = None  # why the attempts cannot be trusted, once they disagree
    best: Reading | None = None
    published: Reading | None = None
    published_at: tuple[float, float] | None = None
    zone: str | None = None
    zone_distance_mm: float | None = None
    history: list[tuple[float, float]] = field(default_factory=list)
    restored: bool = False  # laid down by restore(): read once when it settles (swapped?)


class CardTracker:
    """Turns per-frame detections into ``placed`` / ``removed`` events."""

    def __init__(
        self,
        recogniser: Recogniser,
        *,
        settle_frames: int = 5,
        remove_frames: int = 10,
        read_attempts: int = 5,
        move_tolerance: float = 0.04,
        relocate: float = 0.5,
    ) -> None:
        if settle_frames < 1 or remove_frames < 1 or read_attempts < 1:
            raise ValueError("settle_frames, remove_frames and read_attempts must be >= 1")
        self.recogniser = recogniser
        self.settle_frames = settle_frames
        self.remove_frames = remove_frames
        self.read_attempts = read_attempts
        self.move_tolerance = move_tolerance
        self.relocate = relocate
        self.frame = 0
        self._tracks: list[_Track] = []
        self._next_id = 1

    @property
    def on_table(self) -> list[tuple[int, Reading]]:
        """Published cards currently on the table: ``(track, reading)``."""
        return [(t.id, t.published) for t in self._tracks if t.published is not None]

    def restore(
        self, reading: Reading, zone: str | None, quad: CardQuad, zone_distance_mm: float | None
    ) -> int:
        """Lay down a card published before a restart; return its new track id.

        It is taken as published: the card found there is not published again, and its
        ``removed`` follows as for any other (not seen for ``remove_frames`` frames, or
        slid away by more than ``relocate``). Once the card found there has settled it is
        read once: if it is surely another card (exchanged while the camera was down),
        ``removed`` for the old one and ``placed`` for the new one follow.
        """
        track = _Track(self._next_id, quad, self.frame, attempts=self.read_attempts)
        track.restored = True
        track.published = reading
        track.published_at = quad.centre
        track.zone, track.zone_distance_mm = zone, zone_distance_mm
        self._tracks.append(track)
        self._next_id += 1
        return track.id

    def update(self, frame: Image) -> list[CardEvent]:
        """Process one frame; return the events it caused."""
        self.frame += 1
        quads = self.recogniser.find(frame, refined=False)
        events: list[CardEvent] = []
        matched = self._match(quads)
        for track, quad in matched:
            moved = float(np.hypot(*(np.subtract(quad.centre, track.quad.centre)))) / max(
                1.0, quad.diagonal
            )
            track.quad = quad
            track.last_seen = self.frame
            track.missing = 0
            track.stable = track.stable + 1 if moved <= self.move_tolerance else 0
            if track.published is not None and track.published_at is not None:
                drift = float(np.hypot(*(np.subtract(quad.centre, track.published_at)))) / max(
                    1.0, quad.diagonal
                )
                if drift > self.relocate:
                    events.append(self._event("removed", track))
                    self._unpublish(track)
            if track.restored and track.stable + 1 >= self.settle_frames:
                track.restored = False
                if self._swapped(frame, track):
                    events.append(self._event("removed", track))
                    self._unpublish(track)
            if track.published is None and track.stable + 1 >= self.settle_frames:
                ev = self._identify(frame, track)
                if ev is not None:
                    events.append(ev)
        seen = {id(t) for t, _ in matched}
        keep: list[_Track] = []
        for track in self._tracks:
            if id(track) in seen:
                keep.append(track)
                continue
            track.missing += 1
            if track.missing > FLICKER_FRAMES:
                track.stable = 0
            if track.missing >= self.remove_frames:
                if track.published is not None:
                    events.append(self._event("removed", track))
                continue
            keep.append(track)
        used = {id(q) for _, q in matched}
        for quad in quads:
            if id(quad) not in used:
                keep.append(_Track(self._next_id, quad, self.frame))
                self._next_id += 1
        self._tracks = keep
        return events

    @staticmethod
    def _unpublish(track: _Track) -> None:
        """The track's card has gone: what lies there is a new placement, read afresh."""
        track.published = track.published_at = None
        track.best = None
        track.attempts = 0
        track.guesses = []
        track.disagreement = None

    def _swapped(self, frame: Image, track: _Track) -> bool:
        """Is a restored card, now settled, surely another card than the one published?

        Read once: a card exchanged for another while the camera was down is a removal
        and a placement. Only a confident reading of another card than a card published
        as read counts: an unreadable reading keeps the published card (never guessed),
        and a card published unreadable that reads now is the same placement (published
        once; a second ``placed`` would be a card the shoe never scanned).
        """
        assert track.published is not None
        if not track.published.readable:
            return False
        quad = self.recogniser.refine(track.quad)
        card = warp_card(frame, quad)
        later = [t.quad for t in self._tracks if t.id > track.id]
        reading = self.recogniser.identify(frame, quad, card, covering(quad, later))
        return reading.readable and reading.code != track.published.code

    def _match(self, quads: list[CardQuad]) -> list[tuple[_Track, CardQuad]]:
        """Greedy nearest-centre matching of detections to tracks (half a diagonal at most)."""
        if not quads or not self._tracks:
            return []
        tc = np.array([t.quad.centre for t in self._tracks])
        qc = np.array([q.centre for q in quads])
        td = np.array([t.quad.diagonal for t in self._tracks])
        qd = np.array([q.diagonal for q in quads])
        dist = np.hypot(tc[:, None, 0] - qc[None, :, 0], tc[:, None, 1] - qc[None, :, 1])
        limit = 0.5 * np.maximum(td[:, None], qd[None, :])
        ti, qi = np.nonzero(dist < limit)
        order = np.argsort(dist[ti, qi], kind="stable")
        used_t: set[int] = set()
        used_q: set[int] = set()
        out = []
        for k in order.tolist():
            a, b = int(ti[k]), int(qi[k])
            if a in used_t or b in used_q:
                continue
            used_t.add(a)
            used_q.add(b)
            out.append((self._tracks[a], quads[b]))
        return out

    def _identify(self, frame: Image, track: _Track) -> CardEvent | None:
        if track.attempts >= self.read_attempts:
            return None  # judged not a card: not refined and warped again every frame
        quad = self.recogniser.refine(track.quad)
        card = warp_card(frame, quad)
        if track.attempts == 0:
            others = [t.quad for t in self._tracks if t is not track]
            if not self.recogniser.is_card(frame, quad, card, others):
                # Not a card (a glare spot, a paper): never publish it.
                track.attempts = self.read_attempts
                return None
        track.attempts += 1
        # Cards dealt later lie on top of this one (a cascaded hand).
        later = [t.quad for t in self._tracks if t.id > track.id]
        reading = self.recogniser.identify(frame, quad, card, covering(quad, later))
        reading = self._consistent(track, reading)
        best = track.best
        if (
            best is None
            or (reading.readable and not best.readable)
            or (reading.readable == best.readable and reading.confidence > best.confidence)
        ):
            track.best = reading
        if not (reading.readable or track.attempts >= self.read_attempts):
            return None
        published = track.best if track.best is not None else reading
        if track.disagreement is not None and not published.readable:
            published = replace(published, reason=track.disagreement)
        track.published = published
        track.published_at = track.quad.centre
        track.zone, track.zone_distance_mm = self.recogniser.zone_of(track.quad)
        return self._event("placed", track)

    @staticmethod
    def _consistent(track: _Track, reading: Reading) -> Reading:
        """``reading``, unless an earlier attempt's best guess named another card."""
        earlier = list(track.guesses)
        if reading.guess is not None:
            track.guesses.append(reading.guess)
        if reading.method != "index" or all(g == reading.code for g in earlier):
            return reading
        names = ", ".join(dict.fromkeys([*earlier, str(reading.code)]))
        track.disagreement = f"attempts disagree: {names}"
        return replace(reading, code=None, confidence=0.0, method="none", reason=track.disagreement)

    def _event(self, kind: Literal["placed", "removed"], track: _Track) -> CardEvent:
        assert track.published is not None or kind == "placed"
        reading = track.published if track.published is not None else Reading(None, 0.0, "none")
        return CardEvent(
            kind, track.id, reading, track.zone, track.zone_distance_mm, track.quad, self.frame
        )
