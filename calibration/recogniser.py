"""The card recogniser: find cards, identify each, attribute it to a zone.

Identification uses up to two independent methods:

``barcode``
    the studio deck's printed barcode (see :mod:`calibration.barcode`); a decoded,
    checksum-valid card payload has confidence :data:`BARCODE_CONFIDENCE`.
``index``
    the printed corner index matched against a :class:`~calibration.deck_profile.DeckProfile`;
    both corners are read (a card may lie either way round, and a finger may hide one) and
    their evidence is averaged.

When both are available and agree the method is ``barcode+index`` and the confidence is
the larger of the two. When they disagree and the index is itself confident, the card is
unreadable (``conflict``): something is wrong with the card or the reading, and the
recogniser does not pick a side. When the index is not confident the barcode is used.

A reading below ``threshold`` is *unreadable*: ``code`` is ``None`` and ``readable`` is
``False``; the best guess is kept in ``guess`` for logs only, never published as the card.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.barcode import BarcodeReader
from calibration.body_pips import HIDDEN_GREY
from calibration.colour import has_colour
from calibration.deck_profile import DeckProfile, IndexMatch, card_scale
from calibration.detect import (
    CANON_H,
    CardQuad,
    DetectorConfig,
    card_to_frame,
    find_cards,
    frame_to_card,
    order_corners,
    refine,
    warp_card,
    whiteness,
)
from calibration.index_reader import darkest_channel, extract_index
from calibration.table import TableCalibration, TopDownView, plane_of_card
from calibration.templates import AUGMENT_SCALES, SCORE_FLOOR
from studio.errors import VisionError

Image = NDArray[np.uint8]
FloatArray = NDArray[np.float64]

BARCODE_CONFIDENCE: Final = 0.99
DEFAULT_THRESHOLD: Final = 0.5
# A single corner read as another card with this confidence vetoes the joint reading.
CORNER_VETO: Final = 0.2
# A card's margin is paper where it is grey and at least this share of its brightest part
# is: ink is a fifth of paper or less. A shadow's edge across a card (a phone's, an arm's)
# leaves part of the margin at a third of the light or less: at 0.55, cards across an
# edge were refused (camera_accuracy.py --shadow 0.5 --shadow-edge 2: 31-36 of 480 cards
# a level missed, 0-2 at 0.25; --shadow 0.65 --shadow-edge 4: 33-40, 0-6).
PAPER_SHADE: Final = 0.25
# A card seen at a lower resolution (card_scale) than this fraction of the profile's
# coarsest templates is not read by its index: that is extrapolation. Measured on
# generated frames: on a table filmed at 896x504 (cards 0.15-0.21 of the canonical size;
# the templates go down to 0.22) a 9C read as a confident 9S at 0.21; seen obliquely at
# 720p, cards below 0.16 read as confident look-alikes (2C as 2S) — none in the 720p
# benchmarks' 12,000 cards, the smallest at 0.237.
SCALE_MIN_OF_TEMPLATES: Final = 1.0
# Overlapping cards: an overlap smaller than this fraction of a card is ignored; the card
# whose index corner reads this much better in the overlap is the one on top.
OVERLAP_MIN: Final = 0.02
STACK_MARGIN: Final = 0.1
# A card's index corner in an overlap that does not read as the card's rank (no index
# there, or another rank) while its other corner reads its rank surely: that corner is
# covered, and the other card lies on top (see Recogniser.stacking). Another suit of the
# same rank does not count: suits are not sure at 720p (held-out seed 9200: a 3H on a QD
# read 3H and 3D, was taken as covered, and the QD was read from the 3H's hearts as QH).
COVERED: Final = -2.0
# A pair of cascaded cards whose corners leave the order unclear may be told by the cards
# placed at their true size (Recogniser._placed_order): each index corner must lie this
# much of its card's diagonal inside the other card or outside it, in the placed quads
# and in the split's (on 720p hard cascades 17 of 96 split cards had a corner more than 3 %
# of the diagonal off, 6 placed ones; docs/camera.md). Of the 44 pairs the placed cards
# ordered (all rightly) on generated cascades of four designs, the index corners of 43 lay
# 0.05-0.45 diagonals from the other card's sides, of one 0.03 (refused).
PLACED_MARGIN: Final = 0.05
# A card's outline is a step from paper down to what it lies on. Along its sides, this
# share of points at least must be this much whiter (whiteness, see detect.whiteness) just
# inside than just outside (3 % of the card's diagonal either side). A glare spot fades out
# (measured on generated hard frames: spots 0.00-0.33 of their outline, single cards
# 0.42-1.00 on seven cloth colours); cards overlapping others border paper and are not
# held to it.
OUTLINE_STEP: Final = 25.0
OUTLINE_SHARE_MIN: Final = 0.35
OUTLINE_OFFSET: Final = 0.03
# Motion blur (a hand-held photograph, a shaking camera) smears every glyph the same way,
# and smeared pips of one suit can match another suit's templates better than their own:
# generated medium frames blurred along a line of 6-9 px read 2-11 % of cards as confident
# look-alikes (8C as 8S, 2D as 2H). It widens the card's edges across the motion only. The
# blur of each side's paper-to-cloth step is measured (the spread, in image pixels, of the
# step's slope); when both sides of one pair are blurred more than both of the other by
# MOTION_BLUR_MAX, the index is not read. Measured on 1,441 sharp cards (40 frames of each
# level, seed 777): 0.10 / 0.16 / 0.16 at most at the easy, medium and hard levels (0.14 /
# 0.25 / 0.24 before the profiles were averaged along the edge); 0.61 and more under the
# look-alikes of 6 and 8 px smears (20 medium frames each, seed 4242, a line at a random
# angle; a smear diagonal to the card blurs both pairs alike: not seen here).
MOTION_BLUR_MAX: Final = 0.45
EDGE_STEP_MIN: Final = 25.0  # grey levels from paper to cloth for a side's sample to count
EDGE_ALONG: Final = np.arange(-2.0, 2.01, 1.0)  # profiles averaged along an edge (px)
# A camera out of focus blurs every glyph alike, and past the blur the templates are
# learned at (templates.AUGMENT_BLURS, 1.5 px) a blurred club can be nearer a blurred
# spade than its own templates, above all another print's: generated medium frames (480
# cards each) blurred by a further Gaussian of 1.5 / 1.75 / 2.0 / 2.25 px, read with the
# other print's profile, gave 2 / 7 / 24 / 26 confident look-alikes (9C as 9S at 1.0).
# Learning blurrier templates too (to 2.5 or 3.0 px) did not help. Such a card's edges are
# as blurred as its glyphs: when even its second sharpest side (one odd side, a finger or
# glare, does not count) is blurred more than FOCUS_BLUR_MAX image pixels, the index is
# not read. Measured (see edge_blur): the hard level's cards (blur up to 1.3 px) 1.41
# (median) to 1.79 over 4,800 cards at 720p; the look-alikes at the four blurs 1.74-1.78 /
# 1.86-2.05 / 1.93-2.18 / 2.08-2.32, so 0 / 7 / 24 / 26 of them are refused. The limit
# grows in proportion for cards larger than the coarsest learned scale, whose glyphs the
# same blur touches less.
FOCUS_BLUR_MAX: Final = 1.85
FOCUS_SCALE_REF: Final = max(AUGMENT_SCALES)
# A small card loses its pips to less blur, even to the templates' own: medium frames at
# 960x540 (cards 0.22-0.25 of the canonical size) blurred by a further 1.5 px, read with
# the deck's own profile, gave 3 confident look-alikes in 480 (9C as 9S at 1.0) at
# 1.67-1.78 px. So the blur is also held to FOCUS_BLUR_CANONICAL_MAX as the canonical
# card would show it (divided by the card's scale, see deck_profile.card_scale): those
# measured 7.32-7.92, the hard level's cards at 720p 4.92 (median) to 7.13.
FOCUS_BLUR_CANONICAL_MAX: Final = 7.2
# A camera that sees the layout this unevenly (TableCalibration.squeeze: the image's
# scale across over along; 1.0 straight overhead) turns a card's shape into a rhombus or
# a square, which detection rejects (a phone photograph taken standing at the table:
# generated at 0.65, a third of the cards were missed). Cards are then searched in a view
# straight down on the layout (TableCalibration.top_down), its longer side at most
# TOP_DOWN_MAX times the image's and TOP_DOWN_MAX_PX (cards are identified from the image
# itself; a finer view still places their corners better: on generated hard frames at
# 720p, 2.5 times read 5 cards in 2,400 more than 1.0 times). Those frames, whose
# squeeze is 0.73-1.0, read 7 cards in 2,400 more with the view below 0.85 than without.
OBLIQUE: Final = 0.85
# A lens squeezes the cards towards the frame's corners (radially, to 1 + 3 k1 r^2 of
# their width across, see calibration.lens), and costs less than an angle does. Generated
# frames at 720p, 240 cards a level, with the view and without: through k1 -0.12 (a
# squeeze of 0.64) card for card as well (230 hard both ways); through -0.16 (0.50) the
# view read 10 / 2 / 4 more; through -0.2 (0.31-0.33) at 1080p it found the 12-23 cards a
# level that detection in the frame missed. So a lens's squeeze takes the view only below
# LENS_OBLIQUE; the camera's angle alone is held to OBLIQUE.
LENS_OBLIQUE: Final = 0.6
# A camera's optics soften the small index glyphs, and at Otsu's level thin strokes and
# the gap between rank and pip go first. A card whose edges are blurred SHARPEN_FROM_PX
# or more (see edge_blur; as blurred as the sharpest templates, AUGMENT_BLURS) is read
# through an unsharp mask of SHARPEN_SIGMA_PX frame pixels (the card's scale turns it into
# canonical pixels), as a camera's own processing sharpens; a sharper card is read as it
# is (sharpened, an easy-level QC's halos cost its reading). Templates are unchanged.
# Measured on generated frames at 720p (docs/camera.md): the hard level 2,382 / 2,387 of
# 2,400 on the development / held-out seeds (2,370 / 2,370 unsharpened), another print's
# profile 95.6 % (89.8 %), the standard and French decks 78.5 / 75.6 % (68.5 / 70.0 %);
# medium frames blurred 1.25-1.5 px more, another print: 1 look-alike in 2,880 (4).
# Sigma 0.8 / 2.0 px and amount 2.5 read fewer hard cards (seed 6000), 1.5 the same.
SHARPEN_SIGMA_PX: Final = 1.2
SHARPEN_AMOUNT: Final = 1.0
SHARPEN_FROM_PX: Final = 1.0
# A card lies flat on the table: on the layout its opposite sides are equally long, and a
# calibration's error (even an unknown lens of k1 -0.2) lengthens them alike. A quad whose
# opposite sides differ by more than CARD_SHAPE_MAX is a piece of a card (a hard shadow's
# edge across it, a cover) and is not read by its index: the piece's corner read as a
# court's index in confident misreads (a French 3C as JC, an 8H as KH, 0.39 and 0.40 off,
# under a shadow 0.65 deep). Measured on generated hard frames: cards read right 0.14 off
# at most (0.21 through an unknown lens of -0.12, 0.28 once under that shadow).
CARD_SHAPE_MAX: Final = 0.3
# With a table calibration a quad is a card only when it covers at most CARD_AREA_MAX
# cards' area on the layout (besides its diagonal, 0.6-1.5 cards'). A hand that was not
# split into its cards can be a card's shape with a diagonal just under 1.5 cards': a
# French KS 9S QC cascade at 1080p hard (seed 9100) made a quad of 2.33 cards' area whose
# corner read QS at 1.0. On generated frames (true calibrations) single cards cover 0.92-0.98
# of a card's area (seed 7000, 648 quads), cards split out of three-card hands 0.90-1.06
# (seed 9100, five designs, 3,212 quads); the hands left whole there 2.33-2.34.
CARD_AREA_MAX: Final = 1.6
# What an unseparated blob of cards (calibration.detect.JOINED_CARDS) is reported as.
JOINED_REASON: Final = "cards touching or overlapping: not separated"
PLANE_CARDS: Final = 5  # without a table calibration, the largest cards tell the plane
TOP_DOWN_MAX: Final = 2.5
TOP_DOWN_MAX_PX: Final = 4000


@dataclass(frozen=True, slots=True)
class Reading:
    """What a card is. ``code`` is ``None`` when unreadable."""

    code: str | None
    confidence: float
    method: str  # "barcode", "index", "barcode+index" or "none"
    serial: str | None = None
    guess: str | None = None  # best index guess even when unreadable (diagnostics only)
    index_code: str | None = None
    index_confidence: float = 0.0
    barcode_code: str | None = None
    reason: str = ""

    @property
    def readable(self) -> bool:
        return self.code is not None


# A card's index corners as an overlap splits them (see Recogniser._corners_split): None
# when neither lies in it, UNCOMPARABLE when both do (or there is no deck profile to read
# them with), else (corner inside, corner outside), each read.
UNCOMPARABLE: Final = "uncomparable"
CornerSplit = tuple[IndexMatch | None, IndexMatch | None] | Literal["uncomparable"] | None


def _is_red(suit: str) -> bool:
    return suit in ("H", "D")


@dataclass(slots=True)
class Stacking:
    """Overlapping cards: ``above[i]`` may lie on card ``i``; ``unclear``: cards not to read."""

    above: list[set[int]]
    unclear: set[int]


@dataclass(slots=True)
class CardFound:
    """A card found in one image."""

    quad: CardQuad
    zone: str | None
    zone_distance_mm: float | None
    reading: Reading
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        r = self.reading
        cx, cy = self.quad.centre
        return {
            "card": r.code,
            "readable": r.readable,
            "zone": self.zone,
            "zone_distance_mm": None
            if self.zone_distance_mm is None
            else round(self.zone_distance_mm, 1),
            "confidence": round(r.confidence, 3),
            "method": r.method,
            "serial": r.serial,
            "guess": r.guess,
            "reason": r.reason,
            "centre": [round(cx, 1), round(cy, 1)],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.quad.corners],
        }


def _paper_ok(card: Image) -> bool:
    """A rectified card has a light, grey margin: reject glare spots and other white blobs."""
    h, w = card.shape[:2]
    bw, bh = max(2, w // 16), max(2, h // 16)
    band = np.concatenate(
        [
            card[bh : 2 * bh, bw:-bw].reshape(-1, 3),
            card[-2 * bh : -bh, bw:-bw].reshape(-1, 3),
            card[bh:-bh, bw : 2 * bw].reshape(-1, 3),
            card[bh:-bh, -2 * bw : -bw].reshape(-1, 3),
        ]
    )[::3].astype(np.int16)
    lo, hi = band.min(axis=1), band.max(axis=1)
    paper = (hi - lo < 60) & (lo > PAPER_SHADE * float(np.percentile(lo, 90)))
    return float(paper.mean()) > 0.5


def _sides(quad: CardQuad) -> list[tuple[FloatArray, FloatArray, FloatArray]]:
    """Each side of the quad as (start corner, vector to the next corner, outward unit normal)."""
    c = quad.corners
    centre = c.mean(axis=0)
    out = []
    for i in range(4):
        a, b = c[i], c[(i + 1) % 4]
        side = b - a
        normal = np.array([side[1], -side[0]]) / (float(np.linalg.norm(side)) or 1.0)
        if float(np.dot((a + b) / 2 - centre, normal)) < 0:
            normal = -normal
        out.append((a, side, normal))
    return out


def _sharp_outline(frame: Image, quad: CardQuad) -> bool:
    """Does the quad's outline step down from paper to cloth, as a card's does?"""
    offset = max(1.5, OUTLINE_OFFSET * quad.diagonal)
    inner, outer = [], []
    for a, side, normal in _sides(quad):
        for t in np.linspace(0.15, 0.85, 12):
            p = a + t * side
            inner.append(p - offset * normal)
            outer.append(p + offset * normal)
    h, w = frame.shape[:2]
    pi, po = np.asarray(inner), np.asarray(outer)
    # Both points, once rounded, at least a pixel inside the frame (their 3x3 means are read).
    lo, hi = np.array([1.0, 1.0]), np.array([w - 1.5, h - 1.5])
    seen = np.all((pi >= lo) & (pi < hi) & (po >= lo) & (po < hi), axis=1)
    if not seen.any():
        return True  # the outline lies outside the frame: nothing to judge
    step = _whiteness_at(frame, pi[seen]) - _whiteness_at(frame, po[seen])
    return float(np.mean(step >= OUTLINE_STEP)) >= OUTLINE_SHARE_MIN


def motion_blur(frame: Image, quad: CardQuad) -> float | None:
    """How much more one pair of the card's opposite sides is blurred than the other.

    The smaller blur (see :func:`edge_blur`) of one pair less the larger of the other (the
    larger of the two ways round), in image pixels: positive only when *both* sides of a
    pair are blurrier, so one odd side (a finger, glare) does not count. ``None`` when a
    side shows no step (a card at the frame's edge, on a white desk, under others).
    """
    spreads = edge_blur(frame, quad)
    return None if spreads is None else _smear(spreads)


def _smear(spreads: tuple[float, float, float, float]) -> float:
    s0, s1, s2, s3 = spreads
    return max(min(s0, s2) - max(s1, s3), min(s1, s3) - max(s0, s2))


def focus_blur(spreads: tuple[float, float, float, float]) -> float:
    """How blurred a card is all round: its second sharpest side (one odd side, a finger or
    glare, does not make a sharp card look blurred)."""
    return sorted(spreads)[1]


def focus_blur_limit(scale: float) -> float:
    """The most :func:`focus_blur` (image pixels) at which a card of ``scale`` is read."""
    return min(FOCUS_BLUR_MAX * max(1.0, scale / FOCUS_SCALE_REF), FOCUS_BLUR_CANONICAL_MAX * scale)


def edge_blur(frame: Image, quad: CardQuad) -> tuple[float, float, float, float] | None:
    """How blurred each side of the card is, in image pixels (``None``: a side shows no step).

    Along each side, the grey (darkest channel) profile across the edge is sampled at 12
    places (each the mean of five, see EDGE_ALONG); where it steps down from paper to
    cloth by EDGE_STEP_MIN at least, the spread of its slope (the standard deviation of a
    Gaussian blur) is taken, and the median per side.
    """
    offsets = np.arange(-6.0, 6.01, 0.5)
    mid = (offsets[:-1] + offsets[1:]) / 2
    # Only the card's box (and the profiles' reach round it) is turned grey: the whole
    # frame cost ~1.2 ms per card. Where the box meets the frame's edge, its border is the
    # frame's, so the samples are the same.
    h, w = frame.shape[:2]
    reach = int(offsets[-1]) + 2
    lo = np.maximum(np.floor(quad.corners.min(axis=0)).astype(int) - reach, 0)
    hi = np.minimum(np.ceil(quad.corners.max(axis=0)).astype(int) + reach, (w, h))
    box = frame[lo[1] : hi[1], lo[0] : hi[0]]
    grey = darkest_channel(box).astype(np.float32)
    spreads: list[float] = []
    for a, side, normal in _sides(quad):
        along = a + np.linspace(0.2, 0.8, 12)[:, None] * side - lo
        tangent = side / (float(np.linalg.norm(side)) or 1.0)
        # Each profile is the mean of five parallel ones a pixel apart along the edge:
        # sensor noise and the cloth's texture, as steep as an edge's slope pixel to
        # pixel, widened a sharp card's spread (medium frames with noise of 16 grey
        # levels measured 1.58 px instead of 1.19), an edge only a little.
        pts = (
            along[:, None, None, :]
            + EDGE_ALONG[None, :, None, None] * tangent
            + offsets[None, None, :, None] * normal
        ).reshape(-1, len(offsets), 2)
        prof = (
            cv2.remap(
                grey,
                pts[..., 0].astype(np.float32),
                pts[..., 1].astype(np.float32),
                cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_REPLICATE,
            )
            .astype(np.float64)
            .reshape(len(along), len(EDGE_ALONG), len(offsets))
            .mean(axis=1)
        )
        step = prof[:, :4].mean(axis=1) - prof[:, -4:].mean(axis=1)
        # Only the step itself: from the brightest paper inside the edge to the darkest
        # cloth outside it. A court picture printed close to the edge (a French deck's, a
        # few pixels in at 720p) or a line on the cloth steps down too, and once counted
        # made a sharp card look smeared.
        slope = np.maximum(0.0, -np.diff(prof, axis=1))
        centre = len(offsets) // 2
        first = np.argmax(prof[:, : centre + 1], axis=1)
        last = centre + np.argmin(prof[:, centre:], axis=1)
        k = np.arange(slope.shape[1])
        slope[(k < first[:, None]) | (k >= last[:, None])] = 0.0
        slope = slope[step >= EDGE_STEP_MIN]
        total = slope.sum(axis=1)
        slope, total = slope[total > 0], total[total > 0]
        if len(slope) == 0:
            return None
        w = slope / total[:, None]
        m = (w * mid).sum(axis=1)
        spreads.append(float(np.median(np.sqrt((w * (mid - m[:, None]) ** 2).sum(axis=1)))))
    return spreads[0], spreads[1], spreads[2], spreads[3]


def _whiteness_at(frame: Image, points: FloatArray) -> FloatArray:
    """:func:`calibration.detect.whiteness` of the 3x3 mean at each point."""
    x = np.round(points[:, 0]).astype(np.intp)
    y = np.round(points[:, 1]).astype(np.intp)
    patches = np.stack([frame[y + dy, x + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)])
    mean = np.round(patches.astype(np.float64).mean(axis=0)).astype(np.uint8)
    pixels = mean.reshape(-1, 1, 3) if mean.ndim == 2 else mean.reshape(-1, 1)
    return np.asarray(whiteness(pixels), np.float64).ravel()


class Recogniser:
    """Stateless per-image recognition; :class:`calibration.tracker.CardTracker` adds time."""

    def __init__(
        self,
        profile: DeckProfile | None = None,
        table: TableCalibration | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        barcodes: BarcodeReader | None = None,
        use_index: bool = True,
        detector: DetectorConfig | None = None,
    ) -> None:
        self.profile = profile
        self.table = table
        self.threshold = threshold
        self.barcodes = barcodes
        self.use_index = use_index and profile is not None
        self.detector = detector or DetectorConfig()
        self.oblique = table is not None and (
            table.squeeze(lens=False) < OBLIQUE or table.squeeze() < LENS_OBLIQUE
        )
        self._view: tuple[int, TopDownView] | None = None  # (longer side, view) of the last size
        self._colour: tuple[Image, bool] | None = None  # (frame, has_colour) of the last frame

    # --------------------------------------------------------------- detection

    def find(self, frame: Image, *, refined: bool = True, joined: bool = False) -> list[CardQuad]:
        """Card quads in the frame (no identification).

        An oblique view of the table (see :data:`OBLIQUE`) is searched straight down, and
        the quads mapped back: cards are then identified from the frame itself, not from
        the view (resampled twice, small glyphs lose detail). ``joined=True``: cards
        touching or overlapping that could not be taken apart are one quad marked
        ``joined`` (see :data:`calibration.detect.JOINED_CARDS`), of any size.
        """
        if self.table is not None and (frame.shape[1], frame.shape[0]) != self.table.image_size:
            # Its homography and lens are in the calibration frame's pixels: another size
            # would put every card in the wrong zone, silently.
            w, h = self.table.image_size
            raise VisionError(
                f"the table calibration was fitted on {w}x{h} frames, this one is "
                f"{frame.shape[1]}x{frame.shape[0]}: calibrate on a frame of this camera "
                "at the resolution it streams"
            )
        if self.oblique:
            return self._find_top_down(frame, refined, joined)
        size = None if self.table is None else self.table.card_size_px
        quads = find_cards(
            frame,
            self.detector,
            refined=refined,
            card_diagonal=size,
            piece=self._piece(self.table),
            joined=joined,
        )
        if self.table is not None:
            quads = [q for q in quads if q.joined or self._size_ok(q)]
        return quads

    def _find_top_down(self, frame: Image, refined: bool, joined: bool = False) -> list[CardQuad]:
        assert self.table is not None
        size = _view_side(frame)
        if self._view is None or self._view[0] != size:
            self._view = (size, self.table.top_down(size))
        return self._find_in_view(frame, self._view[1], refined, joined)

    def _find_at_an_angle(self, frame: Image, found: list[CardQuad]) -> list[CardQuad]:
        """Without a table calibration: each of the largest cards found tells the table's
        plane (a card is a 63 x 88 mm rectangle), and the median one is taken; when the
        image sees that plane at an angle, the cards it hid (their shapes no card's in the
        image) are searched in a view straight down. Only cards not found already are
        returned."""
        size = (frame.shape[1], frame.shape[0])
        planes = []
        cards = [q for q in found if not q.joined]  # (a blob of cards is no card's shape)
        for q in sorted(cards, key=lambda q: q.area, reverse=True)[:PLANE_CARDS]:
            plane = plane_of_card(q.corners, size)
            if plane is not None:
                # Judged where the card lies: one card's corners, extrapolated across the
                # whole image, make an overhead photograph look oblique.
                x, y = plane.to_layout(np.array([q.centre]))[0]
                planes.append((plane.squeeze([(float(x), float(y))]), plane))
        if not planes:
            return []
        planes.sort(key=lambda p: p[0])
        squeeze, plane = planes[len(planes) // 2]  # the median card: one bad quad is outvoted
        if squeeze >= OBLIQUE:
            return []
        # Blobs of cards are sized by the plane: one card's quad (maybe itself such a
        # blob) does not size them.
        more = self._find_in_view(
            frame, plane.top_down(_view_side(frame)), refined=True, joined=len(planes) > 1
        )
        # A card is new unless a card was found there; an unseparated blob (see
        # calibration.detect.JOINED_CARDS) is new unless anything was.
        return [
            q
            for q in more
            if all(
                math.dist(q.centre, o.centre) > 0.5 * min(q.diagonal, o.diagonal)
                for o in found
                if q.joined or not o.joined
            )
        ]

    def _find_in_view(
        self, frame: Image, view: TopDownView, refined: bool, joined: bool = False
    ) -> list[CardQuad]:
        """Card quads found in a straight-down ``view`` of the frame, in frame pixels."""
        cal = view.calibration
        quads = find_cards(
            view.warp(frame),
            self.detector,
            refined=refined,
            card_diagonal=cal.card_size_px,
            piece=self._piece(cal),
            joined=joined,
        )
        out = []
        for q in quads:
            if not q.joined and not self._size_ok(q, cal):
                continue
            contour = None if q.contour is None else view.to_image(q.contour)
            corners = view.to_image(q.corners)  # in the card's order: the index corner first
            out.append(
                CardQuad(
                    corners,
                    q.fitted,
                    contour,
                    q.from_sides,
                    q.by_edges,
                    anchor=q.anchor,
                    joined=q.joined,
                )
            )
        return out

    @staticmethod
    def _piece(table: TableCalibration | None) -> Callable[[FloatArray], bool] | None:
        """Is a quad (its corners in ``table``'s image) a piece of a card? (None: no table)"""
        if table is None:
            return None
        return lambda corners: shape_skew(table, corners) > CARD_SHAPE_MAX

    def refine(self, quad: CardQuad) -> CardQuad:
        """``quad`` (from :meth:`find` with ``refined=False``) with its sides fitted to its
        outline (:func:`calibration.detect.refine`) — in the straight-down view when the
        camera is oblique, where a card is a card's shape."""
        if not self.oblique or self._view is None or quad.joined:
            return refine(quad)
        view = self._view[1]
        contour = None if quad.contour is None else view.to_view(quad.contour)
        seen = CardQuad(view.to_view(quad.corners), quad.fitted, contour, quad.from_sides)
        fitted = refine(seen)
        corners = view.to_image(fitted.corners)
        return CardQuad(corners, quad.fitted, quad.contour, quad.from_sides, quad.by_edges)

    def _size_ok(self, quad: CardQuad, table: TableCalibration | None = None) -> bool:
        """Is ``quad`` a card's size where it lies (in ``table``'s image, by default ours)?"""
        cal = table or self.table
        assert cal is not None
        expected = cal.card_size_px(quad.centre)
        if not 0.6 * expected <= quad.diagonal <= 1.5 * expected:
            return False
        return card_areas(cal, quad.corners) <= CARD_AREA_MAX

    def zone_of(self, quad: CardQuad) -> tuple[str | None, float | None]:
        if self.table is None:
            return None, None
        zone, dist = self.table.zone_of(quad.centre)
        return zone, dist

    # ------------------------------------------------------------ identification

    def identify(
        self,
        frame: Image,
        quad: CardQuad,
        card: Image | None = None,
        hidden: Sequence[CardQuad] = (),
    ) -> Reading:
        """Identify one card. ``hidden``: cards lying on top of it (see :func:`hide`)."""
        card = warp_card(frame, quad) if card is None else card
        if hidden:
            card = hide(card, quad, hidden)
        index_code: str | None = None
        index_conf = 0.0
        guess: str | None = None
        note = ""  # why colour left the suit unsure (see IndexMatch.suit_note)
        scale = card_scale(quad)
        too_small = (
            self.profile is not None
            and scale < SCALE_MIN_OF_TEMPLATES * self.profile.coarsest_scale
        )
        skew = None if self.table is None else shape_skew(self.table, quad.corners)
        misshapen = skew is not None and skew > CARD_SHAPE_MAX
        # Neither is read by its index; a barcode on it still is.
        no_index = too_small or misshapen
        spreads = edge_blur(frame, quad) if self.use_index and not no_index else None
        smear = None if spreads is None else _smear(spreads)
        smeared = smear is not None and smear > MOTION_BLUR_MAX
        focus = None if spreads is None else focus_blur(spreads)
        unfocused = focus is not None and focus > focus_blur_limit(scale)
        # A card out of focus is still matched, for its guess only: the tracker publishes a
        # later attempt's reading only if every earlier guess named the same card, and a
        # card at the limit may pass it on one frame of several (a 4C read as a confident
        # 4S on one frame in four, the others guessing 4C).
        if self.use_index and not no_index and not smeared:
            assert self.profile is not None
            soft = focus is not None and focus >= SHARPEN_FROM_PX
            face = sharpened(card, scale) if soft else card
            corners = [
                g for g in (extract_index(face, c, self.profile.region) for c in (0, 1)) if g
            ]
            body = self.profile.read_body(face, scale)
            colour = self._frame_colour(frame)
            match = self.profile.match_corners(corners, scale, body, colour)
            if match is not None:
                guess, index_conf = match.code, match.confidence
                note = match.suit_note
                index_code = match.code
                # A fragment of a glyph matches the fragments that blur leaves of other
                # ranks' glyphs (the standard deck's thin J and 5 as pieces of a K and a Q,
                # 0.98 and 0.71): corners that show only fragments name a rank only when
                # the body's pips fit exactly that rank.
                fragments = [self.profile.fragment(g) for g in corners]
                if all(fragments) and not (body is not None and body.exact == {match.rank.label}):
                    index_conf = min(index_conf, 0.0)
                if len(corners) == 2:
                    # Each corner alone must not contradict the joint reading.
                    single = [self.profile.match(g, scale, body, colour) for g in corners]
                    if any(m.code != match.code and m.confidence >= CORNER_VETO for m in single):
                        index_conf = min(index_conf, 0.0)
                    # A fragment of a glyph needs the whole one in the other corner to
                    # confirm it, read as that rank legibly and as surely as a corner must
                    # be to veto (CORNER_VETO): a finger over a K's arm leaves a piece that
                    # a Q's blurred templates match better than the whole K matches the
                    # K's; a French 2 blurred to its curve reads as a 3 in both corners,
                    # the whole-looking one at 0.66 (its rank 0.05 sure).
                    whole_rank = (
                        single[fragments.index(False)].rank if fragments.count(False) == 1 else None
                    )
                    if whole_rank is not None and (
                        whole_rank.label != match.rank.label
                        or whole_rank.score <= SCORE_FLOOR
                        or whole_rank.confidence < CORNER_VETO
                    ):
                        index_conf = min(index_conf, 0.0)
        bc = None
        if self.barcodes is not None:
            reads = self.barcodes.read(card)
            if not reads:
                # A small card: try the un-rectified neighbourhood at full resolution too.
                reads = self.barcodes.read(_roi(frame, quad))
            codes = {r.code for r in reads}
            if len(codes) == 1:
                bc = reads[0]
            elif len(codes) > 1:
                return Reading(
                    None,
                    0.0,
                    "none",
                    guess=guess,
                    index_code=index_code,
                    index_confidence=index_conf,
                    reason=f"several barcodes {sorted(codes)}",
                )
        index_ok = index_code is not None and index_conf >= self.threshold and not unfocused
        if bc is not None:
            if index_code is None or not index_ok:
                agree = index_code == bc.code
                method = "barcode+index" if agree else "barcode"
                return Reading(
                    bc.code,
                    BARCODE_CONFIDENCE,
                    method,
                    bc.serial,
                    guess,
                    index_code,
                    index_conf,
                    bc.code,
                )
            if index_code == bc.code:
                return Reading(
                    bc.code,
                    max(BARCODE_CONFIDENCE, index_conf),
                    "barcode+index",
                    bc.serial,
                    guess,
                    index_code,
                    index_conf,
                    bc.code,
                )
            return Reading(
                None,
                0.0,
                "none",
                bc.serial,
                guess,
                index_code,
                index_conf,
                bc.code,
                reason=f"conflict: barcode {bc.code} vs index {index_code}",
            )
        if index_ok:
            return Reading(index_code, index_conf, "index", None, guess, index_code, index_conf)
        reason = "no index found" if index_code is None else f"low confidence {index_conf:.2f}"
        if note and index_code is not None:
            reason += f" ({note})"
        if unfocused:
            reason = (
                f"out of focus: edges blurred {focus:.2f} px, "
                f"read up to {focus_blur_limit(scale):.2f} px"
            )
        if smeared:
            reason = f"motion blur: one pair of edges {smear:.2f} px more blurred than the other"
        if misshapen:
            reason = (
                f"not a whole card: opposite sides {skew:.0%} apart on the layout "
                "(a piece of one, cut by a shadow's edge or a cover)"
            )
        elif too_small:
            assert self.profile is not None
            seen, least = (round(CANON_H * v) for v in (scale, self.profile.coarsest_scale))
            reason = f"too small to read: {seen} px long, the profile reads from {least} px"
        if not self.use_index and self.barcodes is not None:
            reason = "no barcode decoded"
        elif self.barcodes is not None:
            reason += "; no barcode decoded"
        # A refused card's match is a guess only: its confidence is not the reading's.
        shown = 0.0 if unfocused else index_conf
        return Reading(None, shown, "none", None, guess, index_code, index_conf, reason=reason)

    def _frame_colour(self, frame: Image) -> bool:
        """Does ``frame`` show colour (see :func:`calibration.colour.has_colour`)? Measured
        once a frame: its cards are identified one after another."""
        if self._colour is None or self._colour[0] is not frame:
            self._colour = (frame, has_colour(frame))
        return self._colour[1]

    def recognise(self, frame: Image) -> list[CardFound]:
        """Every card in one image, identified and attributed to a zone. Cards touching or
        overlapping that could not be taken apart are one unreadable entry (see
        :data:`calibration.detect.JOINED_CARDS`): never dropped unreported."""
        found = self.find(frame, joined=True)
        if self.table is None and found:
            more = self._find_at_an_angle(frame, found)
            # Cards the view straight down took apart replace the blob they were.
            found = [
                q
                for q in found
                if not q.joined or not any(_centre_in(m, q) for m in more if not m.joined)
            ] + more
        joined = [q for q in found if q.joined]
        quads = [q for q in found if not q.joined]
        cards = [warp_card(frame, q) for q in quads]
        keep = [
            i
            for i, (q, c) in enumerate(zip(quads, cards, strict=True))
            if self.is_card(frame, q, c, [o for o in quads if o is not q])
        ]
        quads, cards = [quads[i] for i in keep], [cards[i] for i in keep]
        stack = self.stacking(quads, cards, frame)
        out = []
        for quad in joined:
            zone, dist = self.zone_of(quad)
            out.append(
                CardFound(quad, zone, dist, Reading(None, 0.0, "none", reason=JOINED_REASON))
            )
        for i, (quad, card) in enumerate(zip(quads, cards, strict=True)):
            zone, dist = self.zone_of(quad)
            if i in stack.unclear:
                # Which of two overlapping cards lies on top is unclear, and an index
                # corner lies in their overlap: reading either would mean trusting a
                # corner that may show the other card's face.
                reading = Reading(None, 0.0, "none", reason="overlapped: order unclear")
            else:
                reading = self.identify(frame, quad, card, [quads[j] for j in stack.above[i]])
            out.append(CardFound(quad, zone, dist, reading))
        return out

    def stacking(
        self, quads: list[CardQuad], cards: list[Image], frame: Image | None = None
    ) -> Stacking:
        """Which cards may lie on top of which.

        Of two overlapping cards, the one on top shows the index corner that lies in their
        overlap; the other's index corner there is covered. When the index corners do not
        say, each card is taken as covered by the other; if an index corner of either lies
        in the overlap, both are also *unclear* (:meth:`recognise` reads neither) -- unless,
        with a table calibration and the ``frame``, the cards placed at their true size
        tell (see :meth:`_placed_order`).
        """
        stack = Stacking([set() for _ in quads], set())
        reads: dict[int, list[IndexMatch | None]] = {}  # each card's corners, read once

        def split(k: int, overlap: FloatArray) -> CornerSplit:
            def corners() -> list[IndexMatch | None]:
                if k not in reads:
                    reads[k] = self._read_corners(quads[k], cards[k])
                return reads[k]

            return self._corners_split(quads[k], overlap, corners)

        for i, j in itertools.combinations(range(len(quads)), 2):
            overlap = _overlap(quads[i], quads[j])
            if overlap is None:
                continue
            ci, cj = split(i, overlap), split(j, overlap)
            si, sj = self._index_score(ci), self._index_score(cj)
            own_i, own_j = self._shows_own_rank(ci, cj), self._shows_own_rank(cj, ci)
            if si is not None and si > 0 and si > (sj or -1.0) + STACK_MARGIN:
                stack.above[j].add(i)
            elif sj is not None and sj > 0 and sj > (si or -1.0) + STACK_MARGIN:
                stack.above[i].add(j)
            elif (si == COVERED) != (sj == COVERED):
                # The top card's own corner in the overlap may not read (its other corner
                # under a third card, or too small), but the covered one shows it is covered.
                stack.above[i if si == COVERED else j].add(j if si == COVERED else i)
            elif own_i != own_j:
                # Both look covered (each corner in the overlap reads other than its card),
                # but one of them shows its own card's rank there: that one is on top.
                stack.above[j if own_i else i].add(i if own_i else j)
            else:
                top = None
                if frame is not None and (si is not None or sj is not None):
                    top = self._placed_order(frame, quads[i], quads[j])
                if top is not None:
                    stack.above[j if top == 0 else i].add(i if top == 0 else j)
                    continue
                stack.above[i].add(j)
                stack.above[j].add(i)
                if si is not None or sj is not None:
                    stack.unclear |= {i, j}
        return stack

    def placed(self, quad: CardQuad) -> CardQuad | None:
        """A card split out of a cascade, placed from the outline's corner it was built
        from (:attr:`CardQuad.anchor`) at a card's true size on the layout, under the
        camera's perspective; ``None`` without a table calibration or for another card.

        The split's hypothesis is a parallelogram of the sides seen, its far corners inside
        the blob where no outline shows them. On the layout the card is a rectangle: the
        two sides at the anchor are made square (the nearest rotation) and laid off at the
        card's size, its long side along the longer one.
        """
        if self.table is None or quad.anchor < 0:
            return None
        c, k = quad.corners, quad.anchor
        p, a, b = self.table.to_layout(np.array([c[k], c[(k + 1) % 4], c[(k + 3) % 4]]))
        u, v = a - p, b - p
        lu, lv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
        if min(lu, lv) <= 0:
            return None
        left, _, right = np.linalg.svd(np.column_stack([u / lu, v / lv]))
        rot = left @ right  # keeps the sides' handedness
        short, long = sorted(self.table.layout.card_size)
        eu, ev = (long, short) if lu > lv else (short, long)
        ru, rv = eu * rot[:, 0], ev * rot[:, 1]
        layout = np.array([p, p + ru, p + ru + rv, p + rv])
        return CardQuad(order_corners(self.table.to_image(layout)), True)

    def _placed_order(self, frame: Image, qi: CardQuad, qj: CardQuad) -> int | None:
        """Which of two overlapping cascaded cards lies on top (0: ``qi``, 1: ``qj``), told
        by the cards placed at their true size (:meth:`placed`); ``None`` when they do not
        tell clearly.

        Only the order is taken from the placed cards: both are read from their own quads
        (the split's). Each index corner's centre must lie clearly inside the other card or
        clearly outside it (:data:`PLACED_MARGIN` of the card's diagonal) and on the same
        side of it in the split's quads, whose top card hides the lower card's corner when
        it is read. Then, as in :meth:`stacking`, the card whose corner in the overlap reads
        as its own card (rank surely, and suit) and better than the other card's by
        :data:`STACK_MARGIN` lies on top; only that evidence counts here.
        """
        if self.profile is None:
            return None
        pi, pj = self.placed(qi), self.placed(qj)
        if pi is None or pj is None:
            return None
        overlap = _overlap(pi, pj)
        if overlap is None:
            return None
        centres = _index_centres(self.profile.region)
        for placed, fitted in zip(
            _index_depths(pi, pj, centres), _index_depths(qi, qj, centres), strict=True
        ):
            if placed * fitted <= 0 or min(abs(placed), abs(fitted)) < PLACED_MARGIN:
                return None

        def split(p: CardQuad) -> CornerSplit:
            return self._corners_split(
                p, overlap, lambda: self._read_corners(p, warp_card(frame, p))
            )

        ci, cj = split(pi), split(pj)
        si, sj = self._index_score(ci), self._index_score(cj)
        if si is not None and si > 0 and si > (sj or -1.0) + STACK_MARGIN:
            return 0
        if sj is not None and sj > 0 and sj > (si or -1.0) + STACK_MARGIN:
            return 1
        return None

    def _read_corners(self, quad: CardQuad, card: Image) -> list[IndexMatch | None]:
        """Each index corner read alone (``None`` where no index is found)."""
        assert self.profile is not None
        scale = card_scale(quad)
        glyphs = [extract_index(card, corner, self.profile.region) for corner in (0, 1)]
        return [None if g is None else self.profile.match(g, scale) for g in glyphs]

    def _corners_split(
        self,
        quad: CardQuad,
        region: FloatArray,
        corners: Callable[[], list[IndexMatch | None]],
    ) -> CornerSplit:
        """The card's index corners as the overlap ``region`` splits them (see
        :data:`CornerSplit`). ``corners`` gives the card's corners read alone (see
        :meth:`_read_corners`), only called when one index corner lies in the overlap.
        """
        if self.profile is None:
            return UNCOMPARABLE  # barcodes only: no index to compare
        centres = _index_centres(self.profile.region)
        inside = [
            cv2.pointPolygonTest(region.astype(np.float32), (float(px), float(py)), False) >= 0
            for px, py in card_to_frame(quad, centres)
        ]
        if not any(inside):
            return None
        if all(inside):
            return UNCOMPARABLE  # both corners in the overlap: nothing to compare
        reads = corners()
        read_in, read_out = reads if inside[0] else reads[::-1]
        return read_in, read_out

    def _index_score(self, split: CornerSplit) -> float | None:
        """How surely the card's index corner inside an overlap reads as this card's index
        (``split``: see :meth:`_corners_split`); ``None`` when no index corner lies there.

        The corner counts only when it reads as the same card (rank and suit, the rank
        confidently) as the card's other corner, which lies outside the overlap: a covered corner
        shows the other card's face, whose pips can look like some rank, hardly like this
        card's rank and suit.
        """
        if split is None:
            return None
        if split == UNCOMPARABLE:
            return -1.0
        read_in, read_out = split
        if (
            read_out is not None
            and read_out.rank.confidence >= self.threshold
            and (read_in is None or read_in.rank.label != read_out.rank.label)
        ):
            # The other corner reads surely, this one not as its rank: covered. Only the
            # rank is sure: a corner of the card's own rank whose unsure suit differs (a
            # 3H's corners read 3H and 3D, both suits 0.0 sure) is no sign of a cover.
            return COVERED
        if read_in is None or read_out is None or read_in.code != read_out.code:
            return -1.0
        # The rank's confidence: one small suit pip alone is never confident (see
        # templates.GLYPH_LOG_RATIO_CAP), but it must still name the same suit.
        sure = read_in.rank.confidence
        return sure if sure >= self.threshold else -1.0

    def _shows_own_rank(self, mine: CornerSplit, theirs: CornerSplit) -> bool:
        """Does a card's corner in the overlap show its own rank, while the other card's
        corner outside the overlap reads as another rank (both splits: see
        :meth:`_corners_split`)?

        Weaker than :meth:`_index_score`: the suit may be its look-alike of the same colour
        (a club's small corner pip read as a spade's). A covered corner shows the other
        card's face, so it could show this rank only where the other card is of that rank
        too: the other card's rank must be known and differ. On generated cascades (seed
        7000, four designs, 720p and 1080p, two- and three-card hands, 1,413 overlapping
        pairs) even a looser test (any suit, the other's rank unknown allowed) held for the
        lower card of none, for the top card of 833.
        """
        if not isinstance(mine, tuple) or not isinstance(theirs, tuple):
            return False
        (read_in, read_out), (_, other_out) = mine, theirs
        if read_in is None or read_out is None or other_out is None:
            return False
        return (
            read_in.rank.label == read_out.rank.label != other_out.rank.label
            and _is_red(read_in.suit.label) == _is_red(read_out.suit.label)
            and min(read_in.rank.confidence, read_out.rank.confidence, other_out.rank.confidence)
            >= self.threshold
        )

    def is_card(
        self,
        frame: Image,
        quad: CardQuad,
        card: Image | None = None,
        others: Sequence[CardQuad] = (),
    ) -> bool:
        """Does the quad look like a card: paper inside (not a marker, a chip) and, unless
        it overlaps one of ``others`` or lies on a surface as light as paper, an outline
        that steps down to the cloth (not a glare spot on a dark cloth, which is as grey and
        as bright as paper)?"""
        if not _paper_ok(warp_card(frame, quad) if card is None else card):
            return False
        return quad.by_edges or _sharp_outline(frame, quad) or bool(covering(quad, others))


def shape_skew(table: TableCalibration, corners: FloatArray) -> float:
    """How far a quad (``corners`` in the table's image) is from a card's shape on the
    layout: 1 minus the smaller ratio of its opposite sides' lengths (0 for a rectangle;
    see :data:`CARD_SHAPE_MAX`)."""
    p = table.to_layout(corners)
    side = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    ratios = [min(side[i], side[i + 2]) / max(side[i], side[i + 2], 1e-9) for i in (0, 1)]
    return 1.0 - float(min(ratios))


def card_areas(table: TableCalibration, corners: FloatArray) -> float:
    """How many cards' area a quad (``corners`` in the table's image) covers on the layout
    (see :data:`CARD_AREA_MAX`)."""
    p = table.to_layout(np.asarray(corners, dtype=np.float64)).astype(np.float32)
    cw, ch = table.layout.card_size
    return float(cv2.contourArea(p)) / max(cw * ch, 1e-9)


def sharpened(card: Image, scale: float) -> Image:
    """``card`` (canonical) through an unsharp mask of SHARPEN_SIGMA_PX frame pixels."""
    sigma = SHARPEN_SIGMA_PX / min(1.0, max(scale, 0.05))
    blurred = cv2.GaussianBlur(card, (0, 0), sigma)
    return np.asarray(
        cv2.addWeighted(card, 1 + SHARPEN_AMOUNT, blurred, -SHARPEN_AMOUNT, 0), np.uint8
    )


def _view_side(frame: Image) -> int:
    """The longer side of a straight-down view of ``frame`` (see :data:`TOP_DOWN_MAX`)."""
    return int(min(round(TOP_DOWN_MAX * max(frame.shape[:2])), TOP_DOWN_MAX_PX))


def _centre_in(quad: CardQuad, other: CardQuad) -> bool:
    """Does ``quad``'s centre lie inside ``other``?"""
    poly = other.corners.astype(np.float32)
    return cv2.pointPolygonTest(poly, (quad.centre[0], quad.centre[1]), False) >= 0


def _overlap(a: CardQuad, b: CardQuad) -> FloatArray | None:
    """The polygon two cards share, or ``None`` when they do not overlap noticeably."""
    area, poly = cv2.intersectConvexConvex(
        a.corners.astype(np.float32), b.corners.astype(np.float32)
    )
    if poly is None or area < OVERLAP_MIN * min(a.area, b.area):
        return None
    return np.asarray(poly, np.float64).reshape(-1, 2)


def _index_centres(region: tuple[float, float, float, float]) -> FloatArray:
    """The centres of a card's two index corners (fractions of the card), the profile's
    index ``region`` and its turn by 180 degrees."""
    x0, y0, x1, y1 = region
    return np.array([[(x0 + x1) / 2, (y0 + y1) / 2], [1 - (x0 + x1) / 2, 1 - (y0 + y1) / 2]])


def _index_depths(a: CardQuad, b: CardQuad, centres: FloatArray) -> list[float]:
    """How deep each index corner (``centres``, see :func:`_index_centres`) of ``a`` lies
    inside ``b``, then each of ``b``'s inside ``a``, in the corner's own card's diagonals
    (negative: outside)."""
    out = []
    for me, other in ((a, b), (b, a)):
        poly = other.corners.astype(np.float32)
        for x, y in card_to_frame(me, centres):
            out.append(cv2.pointPolygonTest(poly, (float(x), float(y)), True) / me.diagonal)
    return out


def covering(quad: CardQuad, others: Sequence[CardQuad]) -> list[CardQuad]:
    """The cards among ``others`` that overlap ``quad``."""
    return [o for o in others if _overlap(quad, o) is not None]


def hide(card: Image, quad: CardQuad, on_top: Sequence[CardQuad]) -> Image:
    """The rectified card with the parts that other cards cover painted neutral grey.

    Grey is neither paper nor ink: a pip position under it is excused (not "plain paper"),
    and no glyph is read from it.
    """
    out = card.copy()
    h, w = out.shape[:2]
    for other in on_top:
        pts = frame_to_card(quad, other.corners) * np.array([w, h])
        cv2.fillPoly(out, [np.round(pts).astype(np.int32).reshape(-1, 1, 2)], HIDDEN_GREY)
    return out


def _roi(frame: Image, quad: CardQuad) -> Image:
    x0, y0 = np.floor(quad.corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.corners.max(axis=0)).astype(int)
    h, w = frame.shape[:2]
    roi = frame[max(0, y0) : min(h, y1), max(0, x0) : min(w, x1)]
    if roi.size and max(roi.shape[:2]) < 200:
        roi = np.asarray(cv2.resize(roi, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), np.uint8)
    return np.ascontiguousarray(roi)
