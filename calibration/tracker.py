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

A published card exchanged for another in the same spot within ``remove_frames`` frames
keeps its track: it is noticed by reading the card again (``verify``) once it is still,
after either of two cheap signs that it may have changed. Its stillness was lost (it
moved, or was not seen for more than ``FLICKER_FRAMES`` frames: a hand over it, or the
card lifted away), or its look changed (every ``LOOK_EVERY`` frames its quad is shrunk to
a 12x17 thumbnail and compared with the one taken when it was published: an exchange in
no frames at all, with no move). The re-reading is taken only when sure: two confident
readings naming the same other card (a barcode: one) are ``removed`` for the old card and
``placed`` for the new one; a reading of the same card, or ``read_attempts`` of them
without such an agreement, keep the card (and its look is taken again). A card published
unreadable is never re-read (a second ``placed`` for it would be a card the shoe never
scanned). The look cannot tell a card from the same rank of another suit (7H for 7D, 5S
for 5C), and an exchange need not be seen as a disturbance (between two frames, or a hand
the detector never finds over the card): so every card is also read again in turn
(*audited*): every ``audit_every`` frames, while no other card is being read again, the
settled readable card read longest ago goes through the same check. The cost stays one
reading every ``audit_every`` frames whatever the number of cards; with n cards on the
table an exchange is noticed within about n * ``audit_every`` frames.

Cards touching or overlapping that the detector cannot take apart (a double-down laid
sideways across a hand, a card dealt touching another at a corner) are one *blob*, tracked
apart from the cards: the cards it hides are held, not removed, and once settled it is one
unreadable ``placed`` when it holds a card not published yet (see :data:`NEW_PAPER`).

:meth:`CardTracker.restore` lays down the cards published before a restart, so that a
card still lying there is not published a second time (see ``drivers.camera.service``);
it is verified once it settles, as a card exchanged while the camera was down may be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Final, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.detect import CARD_AREA_OF_DIAGONAL, CardQuad, FloatArray, warp_card
from calibration.recogniser import JOINED_REASON, Reading, Recogniser, covering

Image = NDArray[np.uint8]

# A card the detector misses for this many frames in a row keeps the stillness it had: in
# glare, next to a layout line as light as paper, a still card can be found in three
# frames of four, and would never settle.
FLICKER_FRAMES: Final = 1

# A published card's look (LOOK_SIZE thumbnail, normalised) is compared with the one taken
# when it was published every LOOK_EVERY frames (about 40 us a card at 720p, so 13 us a
# card a frame), tracks staggered. Below LOOK_SAME (correlation, either way up) it may be
# another card and is read again. Measured on the virtual camera at 720p (16 exchanges a
# level, the same card over 15 frames): the same card 0.91 at least (medium; 0.96 easy and
# hard); a card of another rank mostly 0.4-0.5, up to 0.73-0.90 (two court cards); the
# same rank of another suit 0.86-1.0: those are caught by the lost stillness, not the look.
LOOK_SIZE: Final = (12, 17)
LOOK_EVERY: Final = 3
LOOK_SAME: Final = 0.85

# The same thumbnail also gives the card's ink colour: how much less dark its ink is in red
# than in green or blue, per unit of darkness (0 black ink, 0.25-0.9 red ink on number
# cards; court pictures mix colours, 0-0.5 whatever the suit). A change of more than
# REDNESS_CHANGE since publication has the card read again: a same-rank exchange to a suit
# of the other colour (TD for TC, 2D for 2S), whose look correlates over LOOK_SAME, is then
# noticed within LOOK_EVERY frames instead of in its audit turn. Measured at 720p on two
# designs (8 cameras a level, 12 cards, 40 frames): the same card moved 0.18 at most (a red
# ace at the hard level), number cards of one rank in the two colours differ 0.33 at least.
REDNESS_CHANGE: Final = 0.25
INK_DARK: Final = 0.15  # a pixel this much darker than the card's paper in a channel is ink

# Confident readings of another card, in a row, that make a published card an exchange.
SWAP_READS: Final = 2

# Cards touching or overlapping that the detector could not take apart (a blob: see
# calibration.detect.JOINED_CARDS; asked for with a table calibration only) hide the cards
# the tracker knew there, which are held (not removed) while the blob lies there. Once
# settled, the blob is one unreadable placement when it holds a card not published yet:
# a track under it not yet read, or NEW_PAPER of a card's area beyond the known cards
# there, by two measures that must agree: its outline outside their quads (each grown by
# HELD_MARGIN for the tracker's unrefined quads), and its area above their quads' union
# (areas, not places: cards moved together until the blob settled left their last quads
# behind). Measured on generated frames, in card areas (outside / beyond): a double-down
# across a two-card hand 0.53 / 0.52, across a three-card hand 0.31 / 0.31, a card dealt
# touching another's corner 0.97 / 0.90; two cards pushed together 0.02 / -0.04, then
# moved as one 0.29 / 0.01. A published blob is one more placement each time its outline
# grows by NEW_PAPER of a card (a card laid on it).
NEW_PAPER: Final = 0.2
HELD_MARGIN: Final = 0.04

# One published card is read again (audited) every AUDIT_EVERY frames, the one read longest
# ago first: the only way to see a same-rank exchange to another suit that no disturbance
# gave away. A reading is about 6 ms at 720p (14-17 ms on a loaded core): 12 cards at 720p
# measured 61-81 fps of CPU time with the audit, 77-104 without (the same loaded core).
AUDIT_EVERY: Final = 5

_LOOK_CORNERS: Final = np.array(
    [[0, 0], [2 * LOOK_SIZE[0], 0], [2 * LOOK_SIZE[0], 2 * LOOK_SIZE[1]], [0, 2 * LOOK_SIZE[1]]],
    np.float32,
)


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
    # A published card to read again once still (exchanged?): its look when published,
    # and the readings of the check in progress. (A track judged not a card keeps its look
    # then: changed, it is judged again.)
    look: _Look | None = None
    verify: bool = False
    verify_attempts: int = 0
    verify_codes: list[str] = field(default_factory=list)
    read_at: int = 0  # frame of the last reading of the published card (for the audit)
    # Judged not a card, then judged again as its look changed: published only if read (a
    # glare spot or a hand that passed for a card then must not become an unreadable card).
    rejudged: bool = False
    # Cards not taken apart (a joined quad; see NEW_PAPER): matched to joined quads only,
    # never read; its placement is unreadable.
    blob: bool = False
    # The id its placement goes out under: its own, or that of a blob's placement it took
    # over (see _inherited), so that the card's ``removed`` ends that placement.
    placement: int = 0
    born: tuple[float, float] | None = None  # its centre when first seen
    # A blob's outline area (px) when judged (None: not yet), and the ids of the further
    # cards it stands for (one more unreadable placement each: cards laid on it since).
    paper: float | None = None
    extra: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.placement = self.placement or self.id
        self.born = self.born or self.quad.centre


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
        audit_every: int = AUDIT_EVERY,
    ) -> None:
        if settle_frames < 1 or remove_frames < 1 or read_attempts < 1 or audit_every < 1:
            raise ValueError(
                "settle_frames, remove_frames, read_attempts and audit_every must be >= 1"
            )
        self.recogniser = recogniser
        self.settle_frames = settle_frames
        self.remove_frames = remove_frames
        self.read_attempts = read_attempts
        self.move_tolerance = move_tolerance
        self.relocate = relocate
        self.audit_every = audit_every
        self.frame = 0
        self._tracks: list[_Track] = []
        self._next_id = 1

    @property
    def on_table(self) -> list[tuple[int, Reading]]:
        """Published cards currently on the table: ``(placement, reading)`` (a blob's
        further cards each under its own placement)."""
        return [
            (i, t.published)
            for t in self._tracks
            if t.published is not None
            for i in (t.placement, *t.extra)
        ]

    def restore(
        self, reading: Reading, zone: str | None, quad: CardQuad, zone_distance_mm: float | None
    ) -> int:
        """Lay down a card published before a restart; return its new placement id.

        It is taken as published: the card found there is not published again, and its
        ``removed`` follows as for any other (not seen for ``remove_frames`` frames, or
        slid away by more than ``relocate``). Once the card found there has settled it is
        read again: if it is surely another card (exchanged while the camera was down),
        ``removed`` for the old one and ``placed`` for the new one follow. A blob's further
        cards (see NEW_PAPER), saved one by one, are laid down on the blob again.
        """
        if quad.joined:
            for blob in self._tracks:
                near = math.dist(blob.quad.centre, quad.centre) <= 0.1 * quad.diagonal
                if blob.blob and blob.published is not None and near:
                    blob.extra.append(self._next_id)
                    self._next_id += 1
                    return blob.extra[-1]
        track = _Track(self._next_id, quad, self.frame, attempts=self.read_attempts)
        track.blob = quad.joined
        track.paper = _area(quad) if quad.joined else None
        track.verify = not quad.joined
        track.published = reading
        track.published_at = quad.centre
        track.zone, track.zone_distance_mm = zone, zone_distance_mm
        self._tracks.append(track)
        self._next_id += 1
        return track.placement

    def update(self, frame: Image) -> list[CardEvent]:
        """Process one frame; return the events it caused."""
        self.frame += 1
        # Without a table calibration every blob would be thresholded again at full
        # resolution for cards a few mm apart (see find_cards): too dear a frame.
        quads = self.recogniser.find(frame, refined=False, joined=self.recogniser.table is not None)
        events: list[CardEvent] = []
        blobs = [q for q in quads if q.joined]
        matched = self._match(
            [q for q in quads if not q.joined], [t for t in self._tracks if not t.blob]
        ) + self._match(blobs, [t for t in self._tracks if t.blob])
        held = self._held(blobs, {id(t) for t, _ in matched})
        for track in held:
            # Out of sight under a blob, still there: not missing, read again once seen.
            track.last_seen = self.frame
            track.missing = 0
            track.stable = 0
            self._disturbed(track)
        for track, quad in matched:
            moved = float(np.hypot(*(np.subtract(quad.centre, track.quad.centre)))) / max(
                1.0, quad.diagonal
            )
            track.quad = quad
            track.last_seen = self.frame
            track.missing = 0
            track.stable = track.stable + 1 if moved <= self.move_tolerance else 0
            if track.blob:
                # Cards moved together stay the cards they were: no relocation.
                if track.stable + 1 >= self.settle_frames:
                    events += self._judge_blob(track)
                continue
            if track.stable == 0:
                self._disturbed(track)
            if track.published is not None and track.published_at is not None:
                drift = float(np.hypot(*(np.subtract(quad.centre, track.published_at)))) / max(
                    1.0, quad.diagonal
                )
                if drift > self.relocate:
                    events.append(self._event("removed", track))
                    self._unpublish(track)
            if track.published is not None and track.stable + 1 >= self.settle_frames:
                if not track.verify and self._look_changed(frame, track):
                    self._disturbed(track)
                if track.verify:
                    events += self._verify(frame, track)
            if (
                track.published is None
                and track.look is not None
                and track.stable + 1 >= self.settle_frames
                and self._look_changed(frame, track)
            ):
                # Judged not a card, it looks otherwise now: a card turned face up where its
                # back lay (the hole card, turned in place), or a card laid where a paper was.
                track.attempts, track.look, track.rejudged = 0, None, True
                track.best, track.guesses, track.disagreement = None, [], None
            if track.published is None and track.stable + 1 >= self.settle_frames:
                events += self._identify(frame, track)
        seen = {id(t) for t, _ in matched} | {id(t) for t in held}
        keep: list[_Track] = []
        for track in self._tracks:
            if id(track) in seen:
                keep.append(track)
                continue
            track.missing += 1
            if track.missing > FLICKER_FRAMES:
                track.stable = 0
                self._disturbed(track)
            if track.missing >= self.remove_frames:
                events += self._removed(track)
                continue
            keep.append(track)
        used = {id(q) for _, q in matched}
        for quad in quads:
            if id(quad) not in used:
                keep.append(_Track(self._next_id, quad, self.frame, blob=quad.joined))
                self._next_id += 1
        self._tracks = keep
        if self.frame % self.audit_every == 0:
            self._audit()
        return events

    def _audit(self) -> None:
        """Have the settled readable card read longest ago read again (from the next frame).

        Not while a settled card is being read again (after a hand over the cards, or an
        audit still running): at most one audit at a time, so its cost per frame stays
        bounded. A card re-read once still, but still moving, does not hold it up.
        """
        settled = [t for t in self._tracks if t.missing == 0 and t.stable + 1 >= self.settle_frames]
        if any(t.verify for t in settled):
            return
        due = [t for t in settled if t.published is not None and t.published.readable]
        if due:
            min(due, key=lambda t: (t.read_at, t.id)).verify = True

    @staticmethod
    def _unpublish(track: _Track) -> None:
        """The track's card has gone: what lies there is a new placement, read afresh."""
        track.published = track.published_at = None
        track.best = None
        track.attempts = 0
        track.guesses = []
        track.disagreement = None
        track.look = None
        track.verify = False
        track.verify_attempts = 0
        track.verify_codes = []

    @staticmethod
    def _disturbed(track: _Track) -> None:
        """A published card moved or went out of sight for a while: read it once still.
        (A blob is never read.)"""
        if track.published is not None and not track.blob:
            track.verify = True
            track.verify_attempts = 0
            track.verify_codes = []

    def _look_changed(self, frame: Image, track: _Track) -> bool:
        """Every ``LOOK_EVERY`` frames: does the card look much unlike when it was published?"""
        if (self.frame + track.id) % LOOK_EVERY:
            return False
        now = _look(frame, track.quad)
        if track.look is None:
            track.look = now
            return False
        return (
            _likeness(track.look.thumb, now.thumb) < LOOK_SAME
            or abs(now.redness - track.look.redness) > REDNESS_CHANGE
        )

    def _verify(self, frame: Image, track: _Track) -> list[CardEvent]:
        """Read a settled published card again; ``removed`` and ``placed`` if surely another.

        Only confident readings of another card than a card published as read count: an
        unreadable reading keeps the published card (never guessed), and a card published
        unreadable is not read again (that it reads now does not make it another card; a
        second ``placed`` would be a card the shoe never scanned). Index readings must agree
        ``SWAP_READS`` times in a row (each is another chance for a look-alike to pass the
        threshold by luck); a barcode, checked by its own code, is taken at once.
        """
        published = track.published
        assert published is not None
        if not published.readable:
            return self._verified(frame, track)
        track.read_at = self.frame
        quad = self.recogniser.refine(track.quad)
        card = warp_card(frame, quad)
        later = [t.quad for t in self._tracks if t.id > track.id and not t.blob]
        reading = self.recogniser.identify(frame, quad, card, covering(quad, later))
        track.verify_attempts += 1
        if reading.readable and reading.code == published.code:
            return self._verified(frame, track)
        if reading.readable and reading.code is not None:
            if track.verify_codes and track.verify_codes[-1] != reading.code:
                track.verify_codes = []
            track.verify_codes.append(reading.code)
            if reading.method.startswith("barcode") or len(track.verify_codes) >= SWAP_READS:
                removed = self._event("removed", track)
                self._unpublish(track)
                track.attempts = self.read_attempts
                inherited, blobs = self._inherited(frame, track)
                if inherited:  # the card a blob stood for, found where it lay
                    return [removed]
                track.best = track.published = reading
                track.published_at = track.quad.centre
                track.zone, track.zone_distance_mm = self.recogniser.zone_of(track.quad)
                track.look = _look(frame, track.quad)
                track.read_at = self.frame
                return [removed, *blobs, self._event("placed", track)]
        if track.verify_attempts >= self.read_attempts:
            return self._verified(frame, track)
        return []

    @staticmethod
    def _verified(frame: Image, track: _Track) -> list[CardEvent]:
        """The published card stays: its look now is the one to compare with."""
        track.verify = False
        track.verify_attempts = 0
        track.verify_codes = []
        track.look = _look(frame, track.quad)
        return []

    def _held(self, blobs: list[CardQuad], matched: set[int]) -> list[_Track]:
        """The card tracks not matched this frame (ids in ``matched``) whose centre lies
        on one of the ``blobs``: cards out of sight in a blob (see NEW_PAPER)."""
        return [
            t
            for t in self._tracks
            if not t.blob
            and id(t) not in matched
            and any(_on_blob(t.quad.centre, b) for b in blobs)
        ]

    def _judge_blob(self, track: _Track) -> list[CardEvent]:
        """A settled blob of cards (see NEW_PAPER). Judged first: one unreadable placement
        when it holds a card not published yet. Then, while it lies there: one more for
        each card laid on it (its outline grown by NEW_PAPER of a card at least; moved or
        squared up, it keeps its area)."""
        area = _area(track.quad)
        known = [t for t in self._tracks if not t.blob and _on_blob(t.quad.centre, track.quad)]
        if track.paper is None:
            track.paper = area
            unread = any(t.published is None and t.attempts < self.read_attempts for t in known)
            if unread or self._new_paper(track.quad, known):
                return [self._blob_placement(track)]
            return []
        if area - track.paper >= NEW_PAPER * self._card_area(track.quad, known):
            track.paper = area
            return [self._blob_placement(track)]
        track.paper = max(track.paper, area)
        return []

    def _blob_placement(self, track: _Track) -> CardEvent:
        """One more card the blob stands for: its first placement, or a further one."""
        if track.published is None:
            track.published = Reading(None, 0.0, "none", reason=JOINED_REASON)
            track.published_at = track.quad.centre
            track.zone, track.zone_distance_mm = self.recogniser.zone_of(track.quad)
            track.read_at = self.frame
            return self._event("placed", track)
        track.extra.append(self._next_id)
        self._next_id += 1
        return self._event("placed", track, track.extra[-1])

    def _card_area(self, blob: CardQuad, known: list[_Track]) -> float:
        """A card's area (px) where ``blob`` lies: the cards read there, else the table's."""
        cards = [t.quad.area for t in known if t.published is not None and t.published.readable]
        if cards:
            return float(np.median(cards))
        if self.recogniser.table is not None:
            return CARD_AREA_OF_DIAGONAL * self.recogniser.table.card_size_px(blob.centre) ** 2
        return _area(blob) / 2

    def _new_paper(self, blob: CardQuad, known: list[_Track]) -> bool:
        """Does ``blob`` hold NEW_PAPER of a card's area beyond the ``known`` cards? Both
        measures must say so: its outline outside their quads (each grown HELD_MARGIN),
        and its area above what their quads cover together (areas, not places: cards
        moved together until the blob settled left their last quads behind, and the first
        measure alone then takes the paper they moved onto for a card)."""
        outline = blob.contour if blob.contour is not None else blob.corners
        quads = [t.quad.corners for t in known]
        everything = np.concatenate([outline, *quads])
        lo = np.floor(everything.min(axis=0)).astype(np.int64)
        size = np.ceil(everything.max(axis=0)).astype(np.int64) - lo + 1

        def filled(polygons: list[FloatArray]) -> NDArray[np.bool_]:
            mask = np.zeros((int(size[1]), int(size[0])), np.uint8)
            for p in polygons:
                cv2.fillPoly(mask, [np.round(p - lo).astype(np.int32).reshape(-1, 1, 2)], 255)
            return mask > 0

        centres = [np.asarray(t.quad.centre) for t in known]
        grown = [c + (q - c) * (1.0 + HELD_MARGIN) for c, q in zip(centres, quads, strict=True)]
        outside = int(np.count_nonzero(filled([outline]) & ~filled(grown)))
        beyond = _area(blob) - float(np.count_nonzero(filled(quads)))
        return min(outside, beyond) >= NEW_PAPER * self._card_area(blob, known)

    def _inherited(self, frame: Image, track: _Track) -> tuple[bool, list[CardEvent]]:
        """A card about to be published that came out of a published blob of cards (see
        NEW_PAPER): first seen on it, the blob out of sight for more than a flicker (taken
        apart; a card dealt beside a blob a hand hides is another). Still where the blob
        lay, the card is one of the blob's placements, not another (the blob stood for the
        card it did not read): the track takes it over, unreadable, never read again, and
        no ``removed`` is said; slid away from it, that placement is ``removed`` first, as
        a slid card's is (``relocate``). Returns (taken over, the ``removed`` events)."""
        removed: list[CardEvent] = []
        assert track.born is not None
        for blob in self._tracks:
            if (
                not blob.blob
                or blob.published is None
                or self.frame - blob.last_seen <= FLICKER_FRAMES
                or not _on_blob(track.born, blob.quad, margin=0.1 * blob.quad.diagonal)
            ):
                continue
            placement = blob.extra.pop() if blob.extra else blob.placement
            published = blob.published
            if placement == blob.placement:
                self._unpublish(blob)  # its outline stays judged: seen again, no new placement
            if _on_blob(track.quad.centre, blob.quad):
                track.published, track.placement = published, placement
                track.published_at = track.quad.centre
                track.zone, track.zone_distance_mm = blob.zone, blob.zone_distance_mm
                track.attempts = self.read_attempts
                track.look = _look(frame, track.quad)
                track.read_at = self.frame
                return True, removed
            removed.append(self._event("removed", blob, placement, published))
        return False, removed

    def _removed(self, track: _Track) -> list[CardEvent]:
        """A published track gone: ``removed`` for its placement and each further one."""
        if track.published is None:
            return []
        return [self._event("removed", track, i) for i in (track.placement, *track.extra)]

    @staticmethod
    def _match(quads: list[CardQuad], tracks: list[_Track]) -> list[tuple[_Track, CardQuad]]:
        """Greedy nearest-centre matching of detections to tracks (half a diagonal at most)."""
        if not quads or not tracks:
            return []
        tc = np.array([t.quad.centre for t in tracks])
        qc = np.array([q.centre for q in quads])
        td = np.array([t.quad.diagonal for t in tracks])
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
            out.append((tracks[a], quads[b]))
        return out

    def _identify(self, frame: Image, track: _Track) -> list[CardEvent]:
        if track.attempts >= self.read_attempts:
            return []  # judged not a card: not refined and warped again every frame
        quad = self.recogniser.refine(track.quad)
        card = warp_card(frame, quad)
        if track.attempts == 0:
            others = [t.quad for t in self._tracks if t is not track and not t.blob]
            if not self.recogniser.is_card(frame, quad, card, others):
                # Not a card (a glare spot, a paper, a card's back): never publish it, unless
                # its look changes (see update).
                track.attempts = self.read_attempts
                track.look = _look(frame, track.quad)
                return []
        track.attempts += 1
        # Cards dealt later lie on top of this one (a cascaded hand).
        later = [t.quad for t in self._tracks if t.id > track.id and not t.blob]
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
            return []
        published = track.best if track.best is not None else reading
        if track.rejudged and not published.readable:
            track.look = _look(frame, track.quad)  # not a card after all, until it changes
            return []
        inherited, removed = self._inherited(frame, track)
        if inherited:
            return removed
        if track.disagreement is not None and not published.readable:
            published = replace(published, reason=track.disagreement)
        track.published = published
        track.published_at = track.quad.centre
        track.zone, track.zone_distance_mm = self.recogniser.zone_of(track.quad)
        track.look = _look(frame, track.quad)
        track.read_at = self.frame
        return [*removed, self._event("placed", track)]

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

    def _event(
        self,
        kind: Literal["placed", "removed"],
        track: _Track,
        placement: int | None = None,
        reading: Reading | None = None,
    ) -> CardEvent:
        """An event of ``track``'s placement (or ``placement``, a blob's further one),
        with its published reading (or ``reading``, once unpublished)."""
        reading = reading or track.published
        assert reading is not None or kind == "placed"
        return CardEvent(
            kind,
            placement or track.placement,
            reading or Reading(None, 0.0, "none"),
            track.zone,
            track.zone_distance_mm,
            track.quad,
            self.frame,
        )


@dataclass(frozen=True, slots=True)
class _Look:
    thumb: NDArray[np.float32]  # LOOK_SIZE, zero mean and unit norm
    redness: float  # the ink's colour (see REDNESS_CHANGE); 0 in a grey frame


def _look(frame: Image, quad: CardQuad) -> _Look:
    """A card's coarse look: a small thumbnail of its quad, and its ink's redness.

    Warped straight from the frame at twice the size, then halved by averaging: half the
    cost of :func:`warp_card`'s shrink-then-warp, and steadier from frame to frame.
    """
    w, h = LOOK_SIZE
    m = cv2.getPerspectiveTransform(quad.corners.astype(np.float32), _LOOK_CORNERS)
    warped = cv2.warpPerspective(
        frame, m, (2 * w, 2 * h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    thumb = np.asarray(cv2.resize(warped, (w, h), interpolation=cv2.INTER_AREA), np.float32)
    thumb -= thumb.mean()
    thumb /= max(float(np.linalg.norm(thumb)), 1e-6)
    return _Look(thumb, _redness(np.asarray(warped, np.uint8)))


def _redness(warped: Image) -> float:
    """``(darkness in green or blue - darkness in red) / darkness in green or blue``, summed
    over the ink, each channel's darkness taken against the card's paper (its 90th
    percentile: white-balanced by the card itself, so a tinted light does not look red)."""
    if warped.ndim != 3:
        return 0.0
    px = warped.reshape(-1, 3)
    k = (len(px) - 1) * 9 // 10
    paper = np.partition(px, k, axis=0)[k].astype(np.float32) + 1.0
    dark = 1.0 - px * (1.0 / paper)
    green_blue = np.maximum(dark[:, 0], dark[:, 1])
    ink = np.maximum(green_blue, dark[:, 2]) > INK_DARK
    gb = float(green_blue[ink].sum())
    return (gb - float(dark[ink, 2].sum())) / max(gb, 1e-6)


def _on_blob(point: tuple[float, float], blob: CardQuad, margin: float = 0.0) -> bool:
    """Does ``point`` lie on ``blob`` (its outline, else its corners), or within ``margin``
    px of it?"""
    outline = blob.contour if blob.contour is not None else blob.corners
    contour = outline.astype(np.float32).reshape(-1, 1, 2)
    return cv2.pointPolygonTest(contour, point, margin > 0) >= -margin


def _area(quad: CardQuad) -> float:
    """A quad's area (px): a blob's its outline's."""
    if quad.contour is None:
        return quad.area
    return float(abs(cv2.contourArea(quad.contour.astype(np.float32).reshape(-1, 1, 2))))


def _likeness(a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
    """Correlation of two looks, the better of either way up (corner order may flip)."""
    return max(float((a * b).sum()), float((a * b[::-1, ::-1]).sum()))
