"""Find cards in a frame and warp each to a canonical upright card.

A card is the whitest, least coloured thing on the table. The frame is reduced to a
"whiteness" channel ``min(B,G,R) - 1.5 * (max - min)`` (paper is bright and grey, felt and
skin are coloured, glare on felt is bright but still tinted), thresholded with Otsu (never
below a floor, so an empty table does not produce cards), and each outer contour is fitted
with a quadrilateral. The quad's sides are then refined by fitting lines to the contour
points near each side and intersecting them, which recovers corners that are rounded,
cut off by a finger, or washed out by glare. Blobs of touching cards are split by erosion.

The canonical card is ``CANON_W`` x ``CANON_H`` pixels, portrait; its corners are ordered
clockwise, so the printed index lands in the top-left and (turned by 180 degrees) the
bottom-right corner, whichever way the card lies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.cascade import split_cascade
from calibration.quad_fit import (
    WHOLE_CARD_SUPPORT,
    fit_quad,
    least_area_quad,
    outline_support,
    refine_quad,
)

CANON_W: Final = 240
CANON_H: Final = 336
CARD_RATIO: Final = 63.0 / 88.0
_NEXT: Final = [1, 2, 3, 0]
NOTCHED: Final = 0.985  # solidity below which a blob may be several overlapping cards
# Two cascaded cards, shifted just enough to show the lower index (12 x 15 mm), span a
# diagonal 1.2 times a card's.
CASCADE_SIZE_MIN: Final = 1.12
# A quad this much larger than a card may be two: neighbouring cards joined by glare make
# one card-shaped blob (side by side, 1.45 times a card's diagonal). Such a blob is split
# if it can be; else the quad is kept.
TOO_LARGE: Final = 1.3
# A card's area is this times its diagonal squared (63 x 88 mm); a region the paper mask
# encloses is filled only up to HOLE_MAX card areas when the card's size is known.
CARD_AREA_OF_DIAGONAL: Final = 63.0 * 88.0 / (63.0**2 + 88.0**2)
HOLE_MAX: Final = 1.5
# With a card's size known: printed text or a line of the layout, as light as paper in
# glare, that touches a card joins its blob and skews its quad (a card with a corner on
# its zone's label was found right in 2 frames of 12 and never settled).
# A quad that is not a whole card (the size of one, its outline along its sides) is tried
# again without paper narrower than these fractions of a card's width, when that removes
# TRIM_SHARE of its blob at least; only whole cards are taken from what is left.
# (An opening rounds a card's corners: fewer of its outline's points lie on its sides.)
THIN_PAPER: Final = (0.15, 0.25)
TRIM_SHARE: Final = 0.02
CARD_SIZE: Final = (0.9, 1.1)
TRIMMED_SUPPORT: Final = 0.7
TRIM_GAIN: Final = 0.05  # of the blob's outline, more on the trimmed cards' sides
CARD_WIDTH_OF_DIAGONAL: Final = 63.0 / math.hypot(63.0, 88.0)
# A light cloth (see _paper_level): more of the frame than this above the frame's split,
# and two levels in it at least this far apart (whiteness), mean a cloth under the paper.
PAPER_SHARE_MAX: Final = 0.5
CLOTH_PAPER_GAP: Final = 40.0
# A surface whose median whiteness reaches this is about as white as paper (a white desk,
# where a deck's example photographs may be taken): when no paper stands out from it, the
# cards are looked for by their edges.
LIGHT_SURFACE: Final = 150
# The edge search on such a surface: Canny's thresholds (gradient magnitude after a 1 px
# blur) keep a card's faint edge — a thin line, a shadow — and leave sensor noise out;
# edges closer than OUTLINE_REACH of the image's longer side are taken as one thing.
OUTLINE_CANNY: Final = (12, 36)
OUTLINE_REACH: Final = 0.02
# Paper in a shadow (an arm, someone leaning over the table, the photographer) is darker
# than the frame's split between paper and cloth, or straddles it. Where whiteness between
# SHADOW_LEVEL times the split (SHADOW_FLOOR at least) and SHADOW_UPPER times it fills
# SHADOW_DENSITY of SHADOW_BLOCK-pixel blocks, in a patch whose box could hold SHADOW_PATCH
# of a card, paper is looked for again at the lower level; blobs are taken when they are
# whole cards whose paper stands out from a ring round them by SHADOW_CONTRAST (whiteness).
# The level is well below such paper (a ragged outline is no whole card): in a shadow of
# 0.55 the hard level's cards are 68-77, the split ~83.
SHADOW_LEVEL: Final = 0.45
SHADOW_FLOOR: Final = 30.0
SHADOW_UPPER: Final = 1.25
SHADOW_BLOCK: Final = 8
SHADOW_DENSITY: Final = 0.25
SHADOW_PATCH: Final = 0.25
SHADOW_SUPPORT: Final = 0.75  # of the outline on the sides, when the card's size is known
SHADOW_CONTRAST: Final = 40.0
SHADOW_RING: Final = 0.1  # of the blob's longer side, the surround compared with it
# A court card's paper may be no more than a margin round its picture (a real deck's
# is). A finger or a dim side that cuts the margin leaves an open ring: no hole to fill,
# a blob neither solid nor card-shaped, and it was lost or cut to a piece (16 court cards
# in 1,200 of the standard deck's hard level at 1080p). With the card's size known, the
# ring's convex hull is taken as the card when it has a card's size and proportions and
# a band just inside its outline, OPEN_RING_BAND of a card's width deep, is paper in
# OPEN_RING_PAPER of its area at least.
OPEN_RING_BAND: Final = 0.08
OPEN_RING_PAPER: Final = 0.6
# Cards in a row, side by side (long edges together) or end to end, touching or a few mm
# apart: the shrunk mask closes the gaps, and the row is one blob. Two side by side are
# card-shaped (126 x 88 mm: 0.70, a card 0.716); n side by side are n x 63 by 88 mm, n end
# to end 63 by n x 88: no card's shape. Such a quad is looked at on the frame's own
# pixels, rectified (its longer side SEAM_WIDTH px a pair of cards at most): a seam is a
# line across it, parallel to its shorter sides, within SEAM_WINDOW of k/n of its length,
# where whiteness dips by SEAM_DIP at least below paper on both sides of it (within
# SEAM_REACH: 5 mm of a pair's 126). The window, the reach and the slant are fractions of
# a pair's length (2/n of the row's). A seam runs between two cards' plain margins, from
# end to end, and the cards' rounded corners notch the outline at its ends; a card's own
# middle crosses print, and plain margin at its ends. A seam is taken where it dips in
# SEAM_COVER of the line (and in SEAM_ENDS of each end band, the outer SEAM_END of it),
# SEAM_COVER_SIZED and SEAM_ENDS_SIZED when the table's card size says each part is a
# card (CARD_SIZE, loosened by SEAM_SIZE_SLACK); a row is split when every one of its
# n - 1 seams is. The counts n tried (2 to SEAM_ROW) are those for which each part has a
# card's proportions (CARD_RATIO within SEAM_PART_RATIO), most first.
SEAM_WIDTH: Final = 480
SEAM_WINDOW: Final = 0.08
SEAM_DIP: Final = 25.0
SEAM_REACH: Final = 0.04
SEAM_END: Final = 0.08
SEAM_COVER: Final = 0.6
SEAM_ENDS: Final = 0.4
SEAM_COVER_SIZED: Final = 0.4
SEAM_ENDS_SIZED: Final = 0.2
SEAM_SIZE_SLACK: Final = 0.05
SEAM_ROW: Final = 5
SEAM_PART_RATIO: Final = 0.1
# Without the table's card size, a card-shaped quad split in two at a seam may be one card
# with a line across its middle: a crease, a pen line, a shadow, whose whiteness dips as
# a seam's does. Two cards' seam shows the cloth at both its ends (the cards' rounded
# corners notch the outline there) and along it when they lie apart; a line on a card
# shows ink or paper. Such a quad is split only where, in each end band of the seam (the
# outer SEAM_END of the line, and half that beyond the quad), some row shows the cloth's
# colour near the seam (within SEAM_REACH) in SEAM_CLOTH_SHARE more of the pixel than the
# row's paper away from it does. The cloth's colour is the median of the non-paper pixels
# in a ring SEAM_CLOTH_RING (of each side) round the quad; a cloth with less chroma than
# SEAM_CLOTH_CHROMA (grey, black) is not told from ink or shadow, and no such quad is
# split.
SEAM_CLOTH_RING: Final = 0.06
SEAM_CLOTH_CHROMA: Final = 12.0
SEAM_CLOTH_SHARE: Final = 0.35
# A pair shifted along its seam (side by side, or end to end, 5-30 mm) is a step-shaped
# blob: in its least rectangle, the seam runs from end to end of the rows where both cards
# lie (SEAM_OFFSET_OVERLAP of them at least), beyond which paper lies on one side of it
# only (in SEAM_STEP of the rows), at one end on the one side, at the other on the other.
# The seam is judged on the overlapping rows as a row's is; each card is the paper on its
# side of it.
SEAM_OFFSET_OVERLAP: Final = 0.33
SEAM_STEP: Final = 0.8
SEAM_OFFSET_SLANT: Final = 0.01
# The steps of a cascade show the table: this share of their pixels must be within this
# many grey levels (per channel) of the cloth in a ring this wide around the blob.
# Cards touching at a corner or overlapping (a sideways double-down over a two-card hand)
# that no remedy above takes apart are one blob: it is reported as one unseparated blob
# (``CardQuad.joined``; the recogniser reports it unreadable) rather than dropped, when it
# looks like cards: JOINED_CARDS card areas at least (the table's card size, or the median
# of the cards found in the frame; without either, a blob notched as several cards are,
# solid to JOINED_NOTCHED at most: a layout's square markers are not), its paper
# SHADOW_CONTRAST above a ring round it, solid to JOINED_SOLIDITY at least, and its outline
# straight: JOINED_STRAIGHT of it in runs (a polygon's sides, JOINED_EPSILON px off at
# most at the detection scale) at least JOINED_RUN times the square root of a card's area
# (of the blob's own area when no card's size is known) long. Glare, chips and paper
# scraps are round or small.
# Cards a few mm apart that the shrunk mask joined, in a view wide enough that the gap is
# a pixel or two at the detection scale and the rows' seam is not told (one turned a few
# degrees, a step): with ``joined`` (see find_cards), the blob's paper is thresholded again
# at full resolution, and taken as its pieces when it falls apart into APART_MOST pieces
# at most, each a card (a quad with WHOLE_CARD_SUPPORT of its outline on its sides), of
# APART_AREAS of each other's area, covering APART_COVER of the blob together; and when
# the paper missing between them shows the cloth (TABLE_COLOUR_TOLERANCE of the ring's
# colour in APART_CLOTH of it, that colour APART_CHROMA from grey at least): a pen line
# or a crease across one card splits its paper into two halves of a card's proportions,
# but shows ink or grey paper, not the cloth; on a grey or black cloth it is not told,
# and no blob is split so.
APART_MOST: Final = 4
APART_AREAS: Final = 0.6
APART_COVER: Final = 0.8
APART_CLOTH: Final = 0.5
APART_CHROMA: Final = 12.0
JOINED_CARDS: Final = 1.5
JOINED_SOLIDITY: Final = 0.5
JOINED_NOTCHED: Final = 0.95
JOINED_STRAIGHT: Final = 0.7
JOINED_EPSILON: Final = 1.0
JOINED_RUN: Final = 0.4
TABLE_NOTCH_MIN: Final = 0.25
TABLE_COLOUR_TOLERANCE: Final = 45
TABLE_RING: Final = 9

Image = NDArray[np.uint8]
FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class CardQuad:
    """A card found in a frame. ``corners`` is 4x2 image pixels, clockwise, short edge first."""

    corners: FloatArray
    fitted: bool = False  # True when side lines were intersected past a missing corner
    contour: FloatArray | None = field(default=None, repr=False, compare=False)  # outline, frame px
    # The sides are lines already fitted to the outline's straight runs (see quad_fit).
    from_sides: bool = False
    # Found by its edges on a surface as light as paper (see find_cards): no step from
    # paper down to the surface along its outline.
    by_edges: bool = False
    # Share of the outline's points on the quad's sides (as fitted; see quad_fit).
    support: float = field(default=1.0, compare=False)
    # A card split out of a cascade (see calibration.cascade): the index in ``corners`` of
    # the outline's corner it was built from (the others are its size laid off along the
    # sides seen there); -1 for any other card.
    anchor: int = field(default=-1, compare=False)
    # Cards touching or overlapping that could not be taken apart: the blob's least
    # rectangle, one entry for all of them (see JOINED_CARDS); never read.
    joined: bool = field(default=False, compare=False)
    centre: tuple[float, float] = field(init=False)
    diagonal: float = field(init=False)

    def __post_init__(self) -> None:
        c = self.corners
        self.centre = (float(c[:, 0].mean()), float(c[:, 1].mean()))
        d1 = math.hypot(c[0, 0] - c[2, 0], c[0, 1] - c[2, 1])
        d2 = math.hypot(c[1, 0] - c[3, 0], c[1, 1] - c[3, 1])
        self.diagonal = (d1 + d2) / 2

    @property
    def area(self) -> float:
        return float(abs(cv2.contourArea(self.corners.astype(np.float32))))


@dataclass(frozen=True, slots=True)
class DetectorConfig:
    max_side: int = 640  # the frame is shrunk to this longer side for detection
    min_area_frac: float = 0.0008  # of the frame
    max_area_frac: float = 0.6
    min_ratio: float = 0.5  # short/long side, after perspective
    max_ratio: float = 0.92
    whiteness_floor: int = 60
    min_solidity: float = 0.75


def whiteness(frame: Image) -> Image:
    """``min - 1.5 * (max - min)`` per pixel, clipped to 0..255."""
    if frame.ndim == 2:
        return frame
    b, g, r = cv2.split(frame)
    lo = cv2.min(cv2.min(b, g), r)
    hi = cv2.max(cv2.max(b, g), r)
    chroma = cv2.subtract(hi, lo)
    w = np.asarray(lo, np.int16) - (np.asarray(chroma, np.int16) * 3) // 2
    return np.asarray(np.clip(w, 0, 255), np.uint8)


def order_corners(pts: FloatArray) -> FloatArray:
    """Clockwise (y down), starting with a short side; of the two choices, top-most first."""
    p = np.asarray(pts, dtype=np.float64).reshape(4, 2)
    x, y = p[:, 0], p[:, 1]
    signed = float(np.sum(x * y[_NEXT] - x[_NEXT] * y))
    if signed < 0:
        p = p[::-1].copy()
    sides = np.hypot(*(p - p[_NEXT]).T)
    if sides[0] + sides[2] > sides[1] + sides[3]:
        p = p[_NEXT]
    if p[2, 1] + p[3, 1] < p[0, 1] + p[1, 1]:
        p = p[[2, 3, 0, 1]]
    return np.asarray(p, dtype=np.float64)


def _ratio_ok(quad: FloatArray, cfg: DetectorConfig) -> bool:
    short, long = _sides(quad)
    if short <= 0:
        return False
    ratio = short / long
    return bool(
        cfg.min_ratio <= ratio <= cfg.max_ratio and cv2.isContourConvex(quad.astype(np.float32))
    )


def find_cards(
    frame: Image,
    config: DetectorConfig | None = None,
    *,
    refined: bool = True,
    card_diagonal: Callable[[tuple[float, float]], float] | None = None,
    piece: Callable[[FloatArray], bool] | None = None,
    rows: bool = True,
    joined: bool = False,
) -> list[CardQuad]:
    """All card quadrilaterals in ``frame`` (BGR or gray), in frame pixels.

    ``refined=False`` skips the side-line fit (:func:`refine`): good enough to track.
    ``card_diagonal`` gives a card's diagonal in pixels near an image point (a table
    calibration knows it): only a blob clearly larger than one card is then taken for
    overlapping cards. On a surface about as white as paper (a desk), from which no paper
    stands out, the cards are looked for by their edges (:func:`_find_by_outline`).
    ``piece`` tells a quad (its corners in frame pixels) that is a piece of a card, not a
    whole one (a table calibration knows a card's shape): such a quad does not keep the
    second look at shadowed paper from finding the whole card.
    ``rows=False``: no blob is split at a seam into cards in a row or a shifted pair (a
    photograph known to hold one card: a crease across it is no seam).
    ``joined=True``: a blob of cards touching or overlapping that could not be taken
    apart is returned as one quad marked ``joined`` (see :data:`JOINED_CARDS`) instead
    of nothing, or of a quad larger than a card.
    """
    cfg = config or DetectorConfig()
    h, w = frame.shape[:2]
    scale = min(1.0, cfg.max_side / max(h, w))
    small = (
        np.asarray(
            cv2.resize(frame, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA),
            np.uint8,
        )
        if scale < 1
        else frame
    )
    white = whiteness(small)
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    thresh = _paper_level(white, max(float(otsu), float(cfg.whiteness_floor)))
    # With a card's size known, no region larger than a card is filled in as paper.
    max_hole = (
        None
        if card_diagonal is None
        else HOLE_MAX * CARD_AREA_OF_DIAGONAL * (card_diagonal((w / 2, h / 2)) * scale) ** 2
    )
    # Seal thin coloured lines (court frames, pips near the edge) so a card stays one blob.
    mask = cv2.morphologyEx(
        _paper_mask(white, thresh, max_hole),
        cv2.MORPH_CLOSE,
        cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)),
    )
    sh, sw = mask.shape
    frame_area = float(sh * sw)
    min_area, max_area = cfg.min_area_frac * frame_area, cfg.max_area_frac * frame_area
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found: list[CardQuad] = []
    cascades: list[CardQuad] = []  # already in frame pixels
    unseparated: list[tuple[NDArray[np.int32], CardQuad | None]] = []  # see JOINED_CARDS
    pending = [np.asarray(c, np.int32) for c in contours if cv2.contourArea(c) >= min_area]
    for contour in pending:
        hull_area = cv2.contourArea(cv2.convexHull(contour))
        solidity = cv2.contourArea(contour) / hull_area if hull_area > 0 else 0.0
        if solidity < NOTCHED and _may_be_several(contour, scale, card_diagonal):
            # Notched: a finger over a card, or overlapping cards whose union can look
            # like one larger card.
            cascade, singles = _cascade_at_full_resolution(
                frame, contour, scale, thresh, cfg, (min_area, max_area)
            )
            if cascade:
                cascades.extend(cascade)
                found.extend(singles)
                continue
        result = _accept(contour, cfg, min_area, max_area)
        row = (
            _row_at_full_resolution(
                frame, contour, result, solidity, scale, thresh, cfg, card_diagonal
            )
            if rows
            else []
        )
        if rows and not row:
            row = _offset_pair(frame, contour, solidity, scale, thresh, cfg, card_diagonal)
        if (
            joined
            and not row
            and (
                card_diagonal is None
                or result is None
                or _larger_than_a_card(result, scale, card_diagonal)
            )
        ):
            row = _apart_at_full_resolution(frame, contour, scale, thresh, cfg)
        if row:
            found.extend(row)
            continue
        # A card with something glued on is as large as a card at least (a smaller blob is
        # a marker's paper, a glare spot: not worth the cut).
        size = None  # in card diagonals, when the card's size is known
        if result is not None and card_diagonal is not None:
            size = _size_of_a_card(result, scale, card_diagonal)
            if size >= CARD_SIZE[0] and not _whole_card(result, size):
                trimmed = _without_thin_paper(contour, result, scale, card_diagonal, cfg, min_area)
                if trimmed:
                    found.extend(trimmed)
                    continue
        if card_diagonal is not None and (size is None or size < CARD_SIZE[0]):
            ring = _open_ring(contour, scale, card_diagonal, cfg, min_area, max_area)
            if ring is not None:
                found.append(ring)
                continue
        if result is not None and not _larger_than_a_card(result, scale, card_diagonal):
            found.append(result)
            continue
        split = (
            _split_touching(contour, mask.shape, cfg, min_area, max_area)
            if solidity < 0.93  # concave: cards touching at a corner or an edge?
            else []
        )
        # Glare can join a card to the felt and to the next card at once: the erosion
        # then frees only the card outside the glare; the blob's own threshold may find more.
        # (Not tried when erosion freed two or more: its quads cost a frame of the live path
        # a millisecond or more, for a third card glare hardly ever joins.)
        bright = (
            _brighter_than_surroundings(white, contour, thresh, cfg, min_area)
            if len(split) < 2
            else []
        )
        pieces = bright if len(bright) > len(split) else split
        if joined and all(_larger_than_a_card(p, scale, card_diagonal) for p in pieces):
            # Nothing smaller found (glare's second look may give the blob's quad again):
            # judged once every blob has been (see JOINED_CARDS).
            unseparated.append((contour, result if result is not None or not pieces else pieces[0]))
            continue
        # Nothing smaller found: the large quad stays (the recogniser judges its size).
        found.extend(pieces or ([] if result is None else [result]))
    if unseparated:
        cards = found + [CardQuad(q.corners * scale) for q in cascades]
        found.extend(_joined_or_kept(unseparated, cards, white, thresh, scale, cfg, card_diagonal))
    if not found and not cascades and float(np.median(white[::4, ::4])) >= LIGHT_SURFACE:
        return _find_by_outline(small, scale, cfg, refined)
    shaded = _in_shadow(
        white, thresh, found, cascades, scale, card_diagonal, cfg, min_area, max_area, piece
    )
    if shaded:
        # A whole card found in a shadow replaces the pieces of it the split left.
        found = [q for q in found if not any(_overlaps_quad(q, s) for s in shaded)] + shaded
    inv = 1.0 / scale
    out = []
    for q in found:
        if scale < 1:
            q = CardQuad(
                q.corners * inv,
                q.fitted,
                None if q.contour is None else q.contour * inv,
                q.from_sides,
                joined=q.joined,
            )
        out.append(refine(q) if refined else q)
    return out + cascades


def _apart_at_full_resolution(
    frame: Image,
    contour: NDArray[np.int32],
    scale: float,
    thresh: float,
    cfg: DetectorConfig,
) -> list[CardQuad]:
    """The cards of a blob that falls apart at full resolution, a few mm between them
    (see :data:`APART_MOST`), in detection px; nothing for any other blob."""
    if scale >= 1 or frame.ndim != 3:
        return []
    inv = 1.0 / scale
    x, y, bw, bh = cv2.boundingRect(contour)
    h, w = frame.shape[:2]
    m = TABLE_RING + 2
    x0, y0 = max(0, int(x * inv) - m), max(0, int(y * inv) - m)
    x1, y1 = min(w, int((x + bw) * inv) + m + 1), min(h, int((y + bh) * inv) + m + 1)
    roi = frame[y0:y1, x0:x1]
    origin = np.array([x0, y0], np.float64)
    blob = np.zeros(roi.shape[:2], np.uint8)
    outline = np.round(contour.reshape(-1, 2) * inv - origin).astype(np.int32)
    cv2.drawContours(blob, [outline], -1, 255, -1)
    k = 2 * math.ceil(inv) + 1
    blob = np.asarray(cv2.dilate(blob, np.ones((k, k), np.uint8)), np.uint8)
    paper = np.asarray(cv2.bitwise_and(_paper_mask(whiteness(roi), thresh), blob), np.uint8)
    outlines, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    area = cv2.contourArea(contour) * inv * inv
    parts = [
        np.asarray(p, np.int32) for p in outlines if cv2.contourArea(p) >= area / (2 * APART_MOST)
    ]
    if not 2 <= len(parts) <= APART_MOST:
        return []
    areas = [cv2.contourArea(p) for p in parts]
    if min(areas) < APART_AREAS * max(areas) or sum(areas) < APART_COVER * area:
        return []
    quads = [_accept(p, cfg, 0.0, math.inf) for p in parts]
    if any(q is None or q.support < WHOLE_CARD_SUPPORT for q in quads):
        return []
    if not _cloth_between(roi, parts):
        return []
    out = []
    for q in quads:
        assert q is not None and q.contour is not None
        out.append(
            CardQuad(
                (q.corners + origin) * scale,
                q.fitted,
                (q.contour + origin) * scale,
                q.from_sides,
                support=q.support,
            )
        )
    return out


def _cloth_between(roi: Image, parts: list[NDArray[np.int32]]) -> bool:
    """Does the paper missing between ``parts`` (outlines in ``roi``) show the cloth
    round them (see :data:`APART_CLOTH`)?"""
    paper = np.zeros(roi.shape[:2], np.uint8)
    cv2.drawContours(paper, parts, -1, 255, -1)
    hull = np.zeros_like(paper)
    cv2.fillConvexPoly(hull, cv2.convexHull(np.concatenate(parts)), 255)
    grown = cv2.dilate(paper, np.ones((3, 3), np.uint8))
    gap = cv2.bitwise_and(hull, cv2.bitwise_not(grown))
    ring = cv2.bitwise_and(
        cv2.dilate(hull, np.ones((TABLE_RING, TABLE_RING), np.uint8)), cv2.bitwise_not(hull)
    )
    if cv2.countNonZero(gap) < 20 or cv2.countNonZero(ring) < 20:
        return False
    cloth = np.median(roi[ring > 0].reshape(-1, 3).astype(np.float64), axis=0)
    if float(cloth.max() - cloth.min()) < APART_CHROMA:
        return False  # a grey or black cloth: not told from ink or shadow
    pixels = roi[gap > 0].reshape(-1, 3).astype(np.float64)
    near = np.abs(pixels - cloth).max(axis=1) < TABLE_COLOUR_TOLERANCE
    return float(near.mean()) >= APART_CLOTH


def _joined_or_kept(
    blobs: list[tuple[NDArray[np.int32], CardQuad | None]],
    found: list[CardQuad],
    white: Image,
    thresh: float,
    scale: float,
    cfg: DetectorConfig,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> list[CardQuad]:
    """The blobs no remedy took apart (each with the quad it gave, or None), judged (see
    :data:`JOINED_CARDS`): cards touching or overlapping become one ``joined`` quad; any
    other blob keeps the quad it gave (the recogniser judges its size). ``found``: the
    cards found in the frame (detection px), whose median area is a card's when the
    table's card size is not known."""
    singles = [q.area for q in found if not q.joined]
    typical = float(np.median(singles)) if singles and card_diagonal is None else None
    frame_area = float(white.shape[0] * white.shape[1])
    out = []
    for contour, result in blobs:
        area = float(cv2.contourArea(contour))
        box = cv2.minAreaRect(contour)
        cx, cy = box[0]
        card: float | None = typical
        if card_diagonal is not None:
            card = CARD_AREA_OF_DIAGONAL * (card_diagonal((cx / scale, cy / scale)) * scale) ** 2
        if (
            area <= cfg.max_area_frac * frame_area
            and (card is None or area >= JOINED_CARDS * card)
            and (result is None or card is not None)
            and (card is not None or _solidity(contour) <= JOINED_NOTCHED)
            and _looks_like_cards(white, contour, thresh, card)
        ):
            corners = order_corners(np.asarray(cv2.boxPoints(box), np.float64))
            # Its outline too: the live tracker measures how much of the blob's paper the
            # cards it knew there explain (a card added to them, or only them pushed together).
            outline = contour.reshape(-1, 2).astype(np.float64)
            out.append(CardQuad(corners, contour=outline, joined=True))
        elif result is not None:
            out.append(result)
    return out


def _solidity(contour: NDArray[np.int32]) -> float:
    """A blob's area over its convex hull's."""
    hull = float(cv2.contourArea(cv2.convexHull(contour)))
    return float(cv2.contourArea(contour)) / hull if hull > 0 else 0.0


def _looks_like_cards(
    white: Image, contour: NDArray[np.int32], thresh: float, card: float | None
) -> bool:
    """Is a blob paper with straight edges, as cards are (see :data:`JOINED_CARDS`)?
    ``card``: a card's area there (detection px), when known."""
    area = float(cv2.contourArea(contour))
    if _solidity(contour) < JOINED_SOLIDITY:
        return False
    inside, ring = _inside_and_ring(white, contour)
    if inside - ring < SHADOW_CONTRAST or inside < thresh:
        return False
    poly = cv2.approxPolyDP(contour, JOINED_EPSILON, True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 3:
        return False
    runs = np.hypot(*(np.roll(poly, -1, axis=0) - poly).T)
    least = JOINED_RUN * math.sqrt(card if card is not None else area)
    return float(runs[runs >= least].sum()) >= JOINED_STRAIGHT * float(runs.sum())


def _find_by_outline(
    small: Image, scale: float, cfg: DetectorConfig, refined: bool
) -> list[CardQuad]:
    """Card quads found by their edges instead of their paper (see :func:`find_cards`).

    Edges close to each other are grouped (a card's outline has gaps at its rounded
    corners, and its print lies inside it), and each group's convex hull is fitted like a
    paper blob; a quad inside a larger one is the print of a card, not a card.
    """
    grey = small if small.ndim == 2 else cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(grey, (0, 0), 1.0), *OUTLINE_CANNY, L2gradient=True)
    sh, sw = edges.shape
    reach = 2 * round(OUTLINE_REACH * max(sh, sw) / 2) + 1
    grouped = cv2.dilate(edges, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach, reach)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(grouped, connectivity=8)
    min_area, max_area = cfg.min_area_frac * sh * sw, cfg.max_area_frac * sh * sw
    found: list[CardQuad] = []
    for i in range(1, n):
        x, y, bw, bh = (int(v) for v in stats[i, :4])
        if bw * bh < min_area:
            continue
        box = (slice(y, y + bh), slice(x, x + bw))
        ys, xs = np.nonzero((labels[box] == i) & (edges[box] > 0))
        if len(xs) < 3:
            continue
        hull = cv2.convexHull(np.column_stack([xs + x, ys + y]).astype(np.int32))
        # A dense outline of the hull, for the quad fit and the side-line refinement.
        blob = np.zeros_like(edges)
        cv2.fillConvexPoly(blob, hull, 255)
        contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        outline = np.asarray(max(contours, key=cv2.contourArea), np.int32)
        quad = _accept(outline, cfg, min_area, max_area)
        if quad is not None:
            found.append(quad)
    found = [q for q in found if not any(_inside(q, o) for o in found if o is not q)]
    out = []
    for q in found:
        if scale < 1:
            assert q.contour is not None
            q = CardQuad(q.corners / scale, q.fitted, q.contour / scale, q.from_sides)
        q.by_edges = True
        out.append(refine(q) if refined else q)
    return out


def _in_shadow(
    white: Image,
    thresh: float,
    found: list[CardQuad],
    cascades: list[CardQuad],
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
    cfg: DetectorConfig,
    min_area: float,
    max_area: float,
    piece: Callable[[FloatArray], bool] | None = None,
) -> list[CardQuad]:
    """Cards in a shadow: paper darker than the frame's split ``thresh``, or straddling it
    (see :data:`SHADOW_LEVEL`). The paper mask is taken again at a lower level around such
    paper, and a blob of it is taken when it lies inside the frame (light felt cut by the
    frame's edge made a card-sized blob), overlaps no card found (a piece of a card, less
    than a card's size, does not count: the caller replaces it), is a whole card, and
    stands out from a ring around it as paper does from cloth. ``found`` is in ``white``'s
    pixels, ``cascades`` in the frame's.
    """
    low = max(SHADOW_FLOOR, SHADOW_LEVEL * thresh)
    if low >= thresh:
        return []
    # Dim paper lies between the two levels; so do the blurred outlines of lit cards, and
    # a court card's paper is a thin frame. The paper mask is taken again only around
    # patches of them whose box could hold SHADOW_PATCH of a card there (without a table
    # calibration: the smallest blob looked at) and whose middle is no card found: most
    # frames have none, and a mask of the whole frame would cost each of them ~1.5 ms.
    band = cv2.inRange(white, math.ceil(low), math.floor(SHADOW_UPPER * thresh))
    if cv2.countNonZero(band) < min_area:
        return []
    # Blocks of SHADOW_BLOCK pixels, SHADOW_DENSITY of them in the band: specks (hundreds
    # in a frame) and the outlines of lit cards vanish, paper stays.
    h, w = white.shape[:2]
    k = SHADOW_BLOCK
    density = cv2.resize(band, (-(-w // k), -(-h // k)), interpolation=cv2.INTER_AREA)
    patches, _ = cv2.findContours(
        np.asarray(density >= 255 * SHADOW_DENSITY, np.uint8),
        cv2.RETR_EXTERNAL,
        cv2.CHAIN_APPROX_SIMPLE,
    )
    if not patches:
        return []
    # Pieces of a card (less than a card's size, or not a card's shape: the lit part of a
    # card across a shadow's hard edge) do not keep a whole card from being found.
    taken = [
        q.corners
        for q in found
        if (card_diagonal is None or _size_of_a_card(q, scale, card_diagonal) >= CARD_SIZE[0])
        and (piece is None or not piece(q.corners / scale))
    ] + [q.corners * scale for q in cascades]
    close = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    out: list[CardQuad] = []
    for patch in patches:
        x, y, bw, bh = (k * v for v in cv2.boundingRect(patch))
        middle = (x + bw / 2, y + bh / 2)
        least = min_area
        if card_diagonal is not None:
            there = card_diagonal((middle[0] / scale, middle[1] / scale)) * scale
            least = max(least, SHADOW_PATCH * CARD_AREA_OF_DIAGONAL * there**2)
        if bw * bh < least or any(
            cv2.pointPolygonTest(c.astype(np.float32), middle, False) >= 0 for c in taken
        ):
            continue
        # Each patch on its own, in a box twice its size: what it costs a frame grows with
        # the patches' size (a glare spot on the cloth is one in every frame), not the frame's.
        # With a card's size known, the box reaches a card's diagonal round the patch: of a
        # card across a shadow's hard edge only the shaded part is a patch, and a box twice
        # its size cut the lit part off (a whole card never judged).
        m = max(bw, bh) // 2 + 3
        if card_diagonal is not None:
            m = max(m, math.ceil(there) + 3)
        x0, y0, x1, y1 = max(0, x - m), max(0, y - m), min(w, x + bw + m), min(h, y + bh + m)
        paper = cv2.morphologyEx(_paper_mask(white[y0:y1, x0:x1], low), cv2.MORPH_CLOSE, close)
        blobs, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        for blob in blobs:
            bx, by, bbw, bbh = cv2.boundingRect(blob)
            if bx <= 0 or by <= 0 or bx + bbw >= x1 - x0 or by + bbh >= y1 - y0:
                continue  # cut by the box or the frame: no whole outline to judge
            if not min_area <= cv2.contourArea(blob) <= max_area:
                continue
            contour = np.asarray(blob + np.array([x0, y0]), np.int32)
            if any(_overlaps(contour, corners) for corners in taken):
                continue
            quad = _accept(contour, cfg, min_area, max_area)
            # A finger over a corner bites into the outline: with the card's size known
            # to confirm it, less of the outline need lie on the sides. Bites too deep for
            # that (a hard level's finger, pips by the edge whose thin margin drops below
            # the lower level) leave an open ring: a card's hull with paper along its
            # border (see _open_ring).
            support = WHOLE_CARD_SUPPORT if card_diagonal is None else SHADOW_SUPPORT
            if quad is None or not _whole_card(
                quad, _size_of_a_card(quad, scale, card_diagonal), support
            ):
                if card_diagonal is None:
                    continue
                quad = _open_ring(contour, scale, card_diagonal, cfg, min_area, max_area)
                if quad is None:
                    continue
            inside, ring = _inside_and_ring(white, contour)
            if inside - ring >= SHADOW_CONTRAST:
                out.append(quad)
                taken.append(quad.corners)  # another patch of the same card finds it again
    return out


def _overlaps_quad(a: CardQuad, b: CardQuad) -> bool:
    """Do two quads overlap (either's centre inside the other)?"""
    return _overlaps(np.round(a.corners).astype(np.int32).reshape(-1, 1, 2), b.corners)


def _overlaps(contour: NDArray[np.int32], corners: FloatArray) -> bool:
    """Does a blob overlap a card quad (either's centre inside the other)?"""
    m = cv2.moments(contour)
    if m["m00"] <= 0:
        return False
    centre = (m["m10"] / m["m00"], m["m01"] / m["m00"])
    quad = corners.astype(np.float32)
    mid = corners.mean(axis=0)
    return (
        cv2.pointPolygonTest(quad, centre, False) >= 0
        or cv2.pointPolygonTest(contour, (float(mid[0]), float(mid[1])), False) >= 0
    )


def _inside_and_ring(white: Image, contour: NDArray[np.int32]) -> tuple[float, float]:
    """The whiteness of a blob's paper and the median of a ring around it.

    The blob's paper is its upper quartile: a court card's picture, whose colours have
    little whiteness, covers half of it or more (a card's median in a shadow 0.65 deep,
    26-28 against its margin's 60)."""
    x, y, bw, bh = cv2.boundingRect(contour)
    r = max(2, round(SHADOW_RING * max(bw, bh)))
    h, w = white.shape[:2]
    x0, y0, x1, y1 = max(0, x - r), max(0, y - r), min(w, x + bw + r), min(h, y + bh + r)
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [contour - np.array([x0, y0])], -1, 255, -1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    ring = cv2.subtract(cv2.dilate(blob, kernel), blob)
    roi = white[y0:y1, x0:x1]
    inner, outer = roi[blob > 0], roi[ring > 0]
    if inner.size == 0 or outer.size == 0:
        return 0.0, 255.0
    return float(np.percentile(inner, 75)), float(np.median(outer))


def _inside(quad: CardQuad, other: CardQuad) -> bool:
    """Is ``quad`` smaller than ``other`` with its centre inside it?"""
    if quad.area >= other.area:
        return False
    poly = other.corners.astype(np.float32)
    return cv2.pointPolygonTest(poly, (quad.centre[0], quad.centre[1]), False) > 0


def _brighter_than_surroundings(
    white: Image, contour: NDArray[np.int32], thresh: float, cfg: DetectorConfig, min_area: float
) -> list[CardQuad]:
    """Cards inside a blob that is no card: a card in a glare spot, whose bright felt joins
    it, or cards on a light cloth, which the frame's own split took for paper (against a
    dark surround). Thresholded again with the blob's own Otsu level, the cards stand out.
    The level is taken over the blob's own pixels: its bounding box also holds what
    surrounds it, and would be split as the frame was."""
    x, y, bw, bh = cv2.boundingRect(contour)
    roi = white[y : y + bh, x : x + bw]
    inside = np.zeros((bh, bw), np.uint8)
    cv2.drawContours(inside, [contour - np.array([x, y])], -1, 255, -1)
    level, _ = cv2.threshold(
        roi[inside > 0].reshape(-1, 1), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU
    )
    if level <= thresh + 10:
        return []  # no brighter paper inside
    _, paper = cv2.threshold(roi, level, 255, cv2.THRESH_BINARY)
    # Only the blob's own paper: other blobs inside its bounding box (cards inside a zone
    # outline that glare whitened) are found, and kept, on their own.
    paper = cv2.bitwise_and(paper, inside)
    paper = _fill_holes(
        np.asarray(cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3))), np.uint8)
    )
    parts, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for part in parts:
        q = _accept(np.asarray(part + np.array([x, y]), np.int32), cfg, min_area, float(bw * bh))
        if q is not None:
            out.append(q)
    return out


def _paper_level(white: Image, level: float) -> float:
    """The whiteness that separates paper from what it lies on, given the frame's split.

    On a light cloth against a dark surround, the frame's split separates the table from
    its surround, not the paper from the cloth. Cards never cover most of a view, so when
    most of the frame lies above ``level`` and that bright part holds two clearly
    different levels (cloth and paper, not one sheet of paper in a close-up), the brighter
    of them is the paper.
    """
    above_level = white > level
    if np.count_nonzero(above_level) <= PAPER_SHARE_MAX * white.size:
        return level
    bright = white[above_level]
    upper, _ = cv2.threshold(bright.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    above, below = bright[bright > upper], bright[bright <= upper]
    if above.size == 0 or below.size == 0:
        return level
    if float(above.mean()) - float(below.mean()) < CLOTH_PAPER_GAP:
        return level
    return max(level, float(upper))


def _paper_mask(white: Image, level: float, max_hole: float | None = None) -> Image:
    """Paper: whiteness above ``level``, specks removed.

    A court card's paper is a thin frame round its picture: what the paper encloses is
    filled before the opening, which would otherwise break the frame apart. ``max_hole``
    (pixels; a card's size is known): larger enclosed regions are left open.
    """
    _, mask = cv2.threshold(white, level, 255, cv2.THRESH_BINARY)
    mask = _fill_holes(
        np.asarray(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3))), np.uint8), max_hole
    )
    return np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), np.uint8)


def _fill_holes(mask: Image, max_hole: float | None = None) -> Image:
    """``mask`` with the regions it encloses filled (those up to ``max_hole`` pixels).

    Glare can whiten a layout's printed lines until they pass for paper; a zone's outline
    then encloses the cards in it, and filling it would make them one blob.
    """
    if max_hole is None:
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        filled = np.zeros_like(mask)
        cv2.drawContours(filled, contours, -1, 255, -1)
        return filled
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    filled = mask.copy()
    if hierarchy is None:
        return filled
    small = [
        c
        for c, (_, _, _, parent) in zip(contours, hierarchy[0], strict=True)
        if parent >= 0 and cv2.contourArea(c) <= max_hole
    ]
    cv2.drawContours(filled, small, -1, 255, -1)  # one call: a card has dozens of holes
    return filled


def _may_be_several(
    contour: NDArray[np.int32],
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> bool:
    """Is the blob larger than one card (when the card's size is known)?"""
    if card_diagonal is None:
        return True
    (cx, cy), (w, h), _ = cv2.minAreaRect(contour)
    diagonal = math.hypot(w, h) / scale
    return diagonal >= CASCADE_SIZE_MIN * card_diagonal((cx / scale, cy / scale))


def _whole_card(quad: CardQuad, size: float, support: float = WHOLE_CARD_SUPPORT) -> bool:
    """A card's size (``size``: :func:`_size_of_a_card`), and ``support`` of its outline
    along its sides (nothing glued on)."""
    return quad.support >= support and CARD_SIZE[0] <= size <= CARD_SIZE[1]


def _without_thin_paper(
    contour: NDArray[np.int32],
    result: CardQuad,
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float],
    cfg: DetectorConfig,
    min_area: float,
) -> list[CardQuad]:
    """The whole cards of a blob once paper narrower than :data:`THIN_PAPER` card widths
    is cut off it (an opening): a zone's label or a layout line, as light as paper in
    glare, glued to a card. ``result`` is the quad the whole blob gave, which is no whole
    card. None when the cut leaves no whole card, or when ``result`` runs along more of
    the blob's outline than they do: then the cut took a piece of the card, not something
    glued on. (A blob that gave no quad is left to the other remedies: it may be several
    cards.)"""
    x, y, bw, bh = cv2.boundingRect(contour)
    centre = ((x + bw / 2) / scale, (y + bh / 2) / scale)
    width = CARD_WIDTH_OF_DIAGONAL * card_diagonal(centre) * scale
    pad = round(max(THIN_PAPER) * width) + 2
    blob = np.zeros((bh + 2 * pad, bw + 2 * pad), np.uint8)
    cv2.drawContours(blob, [contour - np.array([x - pad, y - pad])], -1, 255, -1)
    area = cv2.countNonZero(blob)
    for fraction in THIN_PAPER:
        k = round(fraction * width) | 1
        if k < 3:
            continue
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        opened = np.asarray(cv2.morphologyEx(blob, cv2.MORPH_OPEN, kernel), np.uint8)
        if cv2.countNonZero(opened) > (1 - TRIM_SHARE) * area:
            continue  # nothing glued on that is this thin
        parts, _ = cv2.findContours(opened, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        shift = np.array([x - pad, y - pad])
        quads = [
            q
            for part in parts
            if (q := _accept(np.asarray(part + shift, np.int32), cfg, min_area, math.inf))
            is not None
            and _whole_card(q, _size_of_a_card(q, scale, card_diagonal), TRIMMED_SUPPORT)
        ]
        if quads:
            points = contour.reshape(-1, 2).astype(np.float64)
            theirs = sum(outline_support(q.corners, points)[0] for q in quads)
            ours = outline_support(result.corners, points)[0]
            return quads if theirs > ours + TRIM_GAIN * len(points) else []
    return []


def _open_ring(
    contour: NDArray[np.int32],
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float],
    cfg: DetectorConfig,
    min_area: float,
    max_area: float,
) -> CardQuad | None:
    """The card whose paper margin ``contour`` outlines, opened somewhere (see
    :data:`OPEN_RING_BAND`), or ``None``."""
    hull = cv2.convexHull(contour)
    corners = order_corners(least_area_quad(hull))
    if corners.shape != (4, 2) or not _ratio_ok(corners, cfg):
        return None
    quad = CardQuad(corners, False, contour.reshape(-1, 2).astype(np.float64))
    if not min_area <= quad.area <= max_area:
        return None
    size = _size_of_a_card(quad, scale, card_diagonal)
    if not CARD_SIZE[0] <= size <= CARD_SIZE[1]:
        return None
    x, y, bw, bh = cv2.boundingRect(corners.astype(np.float32))
    shift = np.array([x - 1, y - 1], np.int32)
    inside = np.zeros((bh + 2, bw + 2), np.uint8)
    cv2.fillConvexPoly(inside, np.round(corners - shift).astype(np.int32), 255)
    width = CARD_WIDTH_OF_DIAGONAL * quad.diagonal
    k = max(3, round(2 * OPEN_RING_BAND * width) | 1)
    core = cv2.erode(inside, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    band = np.asarray(cv2.subtract(inside, core), np.uint8)
    paper = np.zeros_like(inside)
    cv2.drawContours(paper, [contour - shift], -1, 255, -1)
    on_band = cv2.countNonZero(band)
    if on_band == 0 or cv2.countNonZero(paper & band) < OPEN_RING_PAPER * on_band:
        return None
    return quad


def _size_of_a_card(
    quad: CardQuad,
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> float:
    """The quad's diagonal in card diagonals there (1.0 when the card's size is unknown)."""
    if card_diagonal is None:
        return 1.0
    x, y = quad.centre
    return quad.diagonal / scale / card_diagonal((x / scale, y / scale))


def _larger_than_a_card(
    quad: CardQuad,
    scale: float,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> bool:
    """Is the quad clearly larger than a card there (when the card's size is known)?

    Two neighbouring cards joined by glare can make one card-shaped blob.
    """
    if card_diagonal is None:
        return False
    x, y = quad.centre
    return quad.diagonal / scale > TOO_LARGE * card_diagonal((x / scale, y / scale))


def _cascade_at_full_resolution(
    frame: Image,
    contour: NDArray[np.int32],
    scale: float,
    thresh: float,
    cfg: DetectorConfig,
    areas: tuple[float, float],
) -> tuple[list[CardQuad], list[CardQuad]]:
    """The cards of a blob of overlapping cards, found on the frame's own pixels.

    The steps between cascaded cards are a few millimetres: the shrunk detection mask
    blurs them, so the blob's paper is thresholded again at full resolution. There the
    blob may fall apart (a card that only touched the hand at the shrunk scale): each
    piece is split if it is a cascade, else taken as a single card. Returns the cascades'
    cards (frame pixels) and the single cards (shrunk pixels, like the detection mask's),
    or nothing at all when no piece is a cascade.
    """
    x, y, bw, bh = cv2.boundingRect(contour)
    inv = 1.0 / scale
    h, w = frame.shape[:2]
    m = TABLE_RING + 2
    x0, y0 = max(0, int(x * inv) - m), max(0, int(y * inv) - m)
    x1, y1 = min(w, int((x + bw) * inv) + m + 1), min(h, int((y + bh) * inv) + m + 1)
    roi = frame[y0:y1, x0:x1]
    paper = _paper_mask(whiteness(roi), thresh)
    outlines, _ = cv2.findContours(paper, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    origin = np.array([x0, y0], np.float64)
    cascades: list[CardQuad] = []
    singles: list[CardQuad] = []
    for piece in outlines:
        if cv2.contourArea(piece) * scale * scale < areas[0]:
            continue  # a speck
        outline = np.asarray(piece, np.int32)
        split = split_cascade(outline)
        # No outline to refine against: half of a lower card's outline is another card's.
        cards = []
        for q in split:
            corners = order_corners(q + origin)
            anchor = int(np.argmin(np.hypot(*(corners - (q[0] + origin)).T)))
            cards.append(CardQuad(corners, True, anchor=anchor))
        if (
            cards
            and _steps_show_table(roi, outline)
            and all(_ratio_ok(c.corners, cfg) for c in cards)
        ):
            cascades.extend(cards)
            continue
        shrunk = np.asarray(np.round((outline + origin) * scale), np.int32)
        single = _accept(shrunk, cfg, *areas)
        if single is not None:
            singles.append(single)
    return (cascades, singles) if cascades else ([], [])


def _steps_show_table(roi: Image, outline: NDArray[np.int32]) -> bool:
    """Do the blob's notches show the table, as the steps of a cascade do?

    A single card whose index ink bites into its paper outline (a red index at table
    distance, a finger) can look like two cascaded cards; its notches are ink or skin,
    not the cloth around the card.
    """
    hull = np.zeros(roi.shape[:2], np.uint8)
    cv2.fillConvexPoly(hull, cv2.convexHull(outline), 255)
    blob = np.zeros_like(hull)
    cv2.drawContours(blob, [outline], -1, 255, -1)
    notch = cv2.erode(cv2.bitwise_and(hull, cv2.bitwise_not(blob)), np.ones((3, 3), np.uint8))
    grown = cv2.dilate(hull, np.ones((TABLE_RING, TABLE_RING), np.uint8))
    ring = cv2.bitwise_and(grown, cv2.bitwise_not(hull))
    if cv2.countNonZero(notch) < 20 or cv2.countNonZero(ring) < 20:
        return False
    table = np.median(roi[ring > 0].reshape(-1, 3).astype(np.float64), axis=0)
    pixels = roi[notch > 0].reshape(-1, 3).astype(np.float64)
    near = np.abs(pixels - table).max(axis=1) < TABLE_COLOUR_TOLERANCE
    return float(near.mean()) >= TABLE_NOTCH_MIN


def _accept(
    contour: NDArray[np.int32], cfg: DetectorConfig, min_area: float, max_area: float
) -> CardQuad | None:
    area = cv2.contourArea(contour)
    if not min_area <= area <= max_area:
        return None
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    if hull_area <= 0 or area / hull_area < cfg.min_solidity:
        return None
    fit = fit_quad(contour)
    if fit is None:
        return None
    quad = order_corners(fit.corners)
    if not _ratio_ok(quad, cfg):
        return None
    qa = abs(cv2.contourArea(quad.astype(np.float32)))
    if qa <= 0 or not 0.7 <= area / qa <= 1.1:
        return None
    contour_px = contour.reshape(-1, 2).astype(np.float64)
    return CardQuad(quad, fit.fitted, contour_px, fit.from_sides, support=fit.support)


def refine(quad: CardQuad) -> CardQuad:
    """``quad`` with its sides fitted to its outline (a more exact warp; costs ~0.5 ms).
    A blob of cards (``joined``) is no card: its least rectangle stays."""
    if quad.contour is None or quad.from_sides or quad.joined:
        return quad
    corners = refine_quad(quad.corners, quad.contour.astype(np.float32))
    if not _ratio_ok(corners, DetectorConfig()):
        return quad
    return CardQuad(order_corners(corners), quad.fitted, quad.contour, by_edges=quad.by_edges)


def _split_touching(
    contour: NDArray[np.int32],
    shape: tuple[int, ...],
    cfg: DetectorConfig,
    min_area: float,
    max_area: float,
) -> list[CardQuad]:
    """Separate cards that touch by eroding the blob until it falls apart."""
    area = cv2.contourArea(contour)
    if area < 1.6 * min_area:
        return []
    x, y, bw, bh = cv2.boundingRect(contour)
    blob = np.zeros((bh + 2, bw + 2), np.uint8)
    cv2.drawContours(blob, [contour - np.array([x - 1, y - 1])], -1, 255, -1)
    for k in (3, 5, 7, 9):
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        eroded = cv2.erode(blob, kernel)
        parts, _ = cv2.findContours(eroded, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        parts = [p for p in parts if cv2.contourArea(p) >= min_area * 0.5]
        if len(parts) < 2:
            continue
        out: list[CardQuad] = []
        for p in parts:
            piece = np.zeros_like(blob)
            cv2.drawContours(piece, [p], -1, 255, -1)
            piece = np.asarray(cv2.dilate(piece, kernel), np.uint8) & blob
            cs, _ = cv2.findContours(piece, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cs:
                continue
            c = max(cs, key=cv2.contourArea) + np.array([x - 1, y - 1])
            q = _accept(c.astype(np.int32), cfg, min_area, max_area)
            if q is not None:
                out.append(q)
        if out:
            return out
    return []


def _card_transform(quad: CardQuad) -> FloatArray:
    """The homography from frame pixels to card fractions (0..1 across, 0..1 down)."""
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(quad.corners.astype(np.float32), unit)
    return np.asarray(m, np.float64)


def frame_to_card(quad: CardQuad, points: FloatArray) -> FloatArray:
    """Frame pixels -> fractions of the rectified card (as :func:`warp_card` turns it)."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return np.asarray(cv2.perspectiveTransform(pts, _card_transform(quad)), np.float64).reshape(
        -1, 2
    )


def card_to_frame(quad: CardQuad, points: FloatArray) -> FloatArray:
    """Fractions of the rectified card -> frame pixels."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    m = np.linalg.inv(_card_transform(quad))
    return np.asarray(cv2.perspectiveTransform(pts, m), np.float64).reshape(-1, 2)


def warp_card(frame: Image, quad: CardQuad, width: int = CANON_W, height: int = CANON_H) -> Image:
    """The card, rectified to ``width`` x ``height`` (portrait).

    A card much larger than the canonical size (a close-up photograph) is first shrunk
    with area averaging, so that the warp does not alias thin strokes away.
    """
    corners = quad.corners.astype(np.float64)
    shrink = 1.5 * math.hypot(width, height) / max(1.0, quad.diagonal)
    if shrink < 1.0:
        x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 2, 0)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 3
        roi = frame[y0:y1, x0:x1]
        size = (max(1, round(roi.shape[1] * shrink)), max(1, round(roi.shape[0] * shrink)))
        frame = np.asarray(cv2.resize(roi, size, interpolation=cv2.INTER_AREA), np.uint8)
        corners = (corners - np.array([x0, y0])) * shrink
    dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    out = cv2.warpPerspective(
        frame, m, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(out, np.uint8)


@dataclass(frozen=True, slots=True)
class Seam:
    """A line across a quad (see :data:`SEAM_WIDTH`): where it lies along the longer side
    (0..1, from the first corner), its gap (the same unit), and the share of the line and
    of its poorer end band where whiteness dips."""

    at: float
    gap: float
    cover: float
    ends: float


def _rectified_whiteness(
    frame: Image, corners: FloatArray, longest: float = SEAM_WIDTH
) -> tuple[NDArray[np.float32], FloatArray] | None:
    """The quad ``corners`` (frame px) rectified with its longer side along x (at most
    ``longest`` px), as whiteness; and the homography from its px to the frame's."""
    rect = _rectified(frame, corners, longest)
    if rect is None:
        return None
    return whiteness(rect[0]).astype(np.float32), rect[1]


def _longer_side_first(corners: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The quad's corners turned so that its first side is one of the longer pair, and
    its four sides' lengths in that order."""
    p = np.asarray(corners, np.float64).reshape(4, 2)
    sides = np.hypot(*(p - p[_NEXT]).T)
    if sides[0] + sides[2] < sides[1] + sides[3]:
        return p[_NEXT], sides[_NEXT]
    return p, sides


def _rectified(
    frame: Image, corners: FloatArray, longest: float = SEAM_WIDTH
) -> tuple[Image, FloatArray] | None:
    """:func:`_rectified_whiteness`, the frame's own pixels (colour or grey)."""
    p, sides = _longer_side_first(corners)
    long_side, short_side = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    if short_side < 8:
        return None
    shrink = min(1.0, longest / long_side)
    width = max(16, round(long_side * shrink))
    height = max(8, round(short_side * shrink))
    # Shrunk first with area averaging (a close-up's pair is thousands of px long).
    fh, fw = frame.shape[:2]
    x0, y0 = np.maximum(np.floor(p.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.minimum(np.ceil(p.max(axis=0)).astype(int) + 3, (fw, fh))
    roi = frame[y0:y1, x0:x1]
    local = (p - np.array([x0, y0])) * shrink
    if shrink < 1.0:
        size = (max(1, round(roi.shape[1] * shrink)), max(1, round(roi.shape[0] * shrink)))
        roi = np.asarray(cv2.resize(roi, size, interpolation=cv2.INTER_AREA), np.uint8)
    dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    m = cv2.getPerspectiveTransform(local.astype(np.float32), dst)
    rect = cv2.warpPerspective(
        roi, m, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    back = np.linalg.inv(np.asarray(m, np.float64))
    to_frame = np.array([[1 / shrink, 0, x0], [0, 1 / shrink, y0], [0, 0, 1]]) @ back
    return np.asarray(rect, np.uint8), to_frame


def _cloth_at_seam(frame: Image, corners: FloatArray, at: float, thresh: float) -> bool:
    """Whether the cloth shows at both ends of a seam across the card-shaped quad
    ``corners`` (frame px) at ``at`` (0..1 along its longer side): see
    :data:`SEAM_CLOTH_SHARE`. ``thresh``: the frame's split between paper and cloth."""
    if frame.ndim != 3:
        return False  # (no colour: cloth is not told from ink)
    p, _ = _longer_side_first(corners)
    e = SEAM_CLOTH_RING
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    to_quad = cv2.getPerspectiveTransform(unit, p.astype(np.float32))
    grown = np.array([[-e, -e], [1 + e, -e], [1 + e, 1 + e], [-e, 1 + e]], np.float64)
    outer = np.asarray(cv2.perspectiveTransform(grown.reshape(-1, 1, 2), to_quad), np.float64)
    outer = outer.reshape(4, 2)
    rect = _rectified(frame, outer)
    if rect is None:
        return False
    colour = rect[0].astype(np.float32)
    h, w = colour.shape[:2]
    chroma = colour - colour.mean(axis=2, keepdims=True)
    white = whiteness(rect[0])
    # The quad inside the grown rectangle.
    u0, u1 = round(e / (1 + 2 * e) * w), round((1 + e) / (1 + 2 * e) * w)
    v0, v1 = round(e / (1 + 2 * e) * h), round((1 + e) / (1 + 2 * e) * h)
    ring = np.ones((h, w), bool)
    ring[v0:v1, u0:u1] = False
    ring &= white < thresh
    if ring.sum() < 0.25 * (h * w - (v1 - v0) * (u1 - u0)):
        return False  # no cloth round the quad to tell
    cloth = np.median(chroma[ring], axis=0)
    norm2 = float(cloth @ cloth)
    if norm2 < SEAM_CLOTH_CHROMA**2:
        return False  # grey cloth: not told from ink or a shadow
    share = chroma @ (cloth / norm2)  # of the cloth's colour, pixel by pixel
    qw, qh = u1 - u0, v1 - v0
    x = u0 + at * qw
    reach = max(2, round(SEAM_REACH * qw))
    near = share[:, max(0, round(x - reach)) : round(x + reach) + 1].max(axis=1)
    far = np.zeros(w, bool)
    far[u0 + round(0.15 * qw) : u0 + round(0.85 * qw)] = True
    far[max(0, round(x - 3 * reach)) : round(x + 3 * reach) + 1] = False
    if not far.any():
        return False
    beside = np.median(share[:, far], axis=1)
    shows = (near - beside >= SEAM_CLOTH_SHARE) & (beside < 0.5)
    band = max(2, round(SEAM_END * qh))
    top = shows[max(0, v0 - band // 2) : v0 + band]
    bottom = shows[v1 - band : v1 + band // 2]
    return bool(top.any() and bottom.any())


def find_seam(frame: Image, corners: FloatArray, thresh: float) -> Seam | None:
    """The likeliest seam between two cards across the quad ``corners`` (frame px), near
    its middle (see :data:`SEAM_WIDTH`); ``thresh``: the frame's split between paper and
    cloth (whiteness). None when the quad is too small to look at."""
    rect = _rectified_whiteness(frame, corners)
    return None if rect is None else _seam_in(rect[0], thresh)


def _seam_in(
    white: NDArray[np.float32], thresh: float, at: float = 0.5, unit: float | None = None
) -> Seam:
    """The likeliest seam across a rectified quad's whiteness (see :func:`find_seam`),
    within :data:`SEAM_WINDOW` of ``at`` (0..1 along it). ``unit``: a pair of cards'
    length in the quad's px (its whole length when None: two cards), the unit of the
    window, the reach and the slant."""
    return _best_seam(_seam_hits(white, thresh, unit), white, thresh, at, unit)


def _seam_hits(
    white: NDArray[np.float32], thresh: float, unit: float | None = None
) -> NDArray[np.bool_]:
    """Where whiteness dips by :data:`SEAM_DIP` below paper on both sides, pixel by pixel
    (see :func:`_seam_in`)."""
    lo, left, right = _flanks(white, unit)
    flank = np.minimum(left, right)
    return np.asarray((flank - lo >= SEAM_DIP) & (flank >= thresh), np.bool_)


def _flanks(
    white: NDArray[np.float32], unit: float | None = None
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Pixel by pixel: the darkest whiteness within the seam's slant, and the brightest
    just left and just right of it, within the seam's reach (-1 beyond the quad)."""
    w = white.shape[1]
    u = w if unit is None else unit
    k = max(1, round(0.006 * u))  # a seam a little aslant in the rectified quad
    reach = max(k + 2, round(SEAM_REACH * u))
    lo = cv2.erode(white, np.ones((1, 2 * k + 1), np.uint8))
    span = reach - k
    near = cv2.dilate(white, np.ones((1, span), np.uint8), anchor=(span - 1, 0))
    # near[y, x] = max(white[y, x - span + 1 .. x]): the brightest just left of x - k ...
    left = np.full_like(white, -1.0)
    left[:, k + 1 :] = near[:, : w - k - 1]
    # ... and just right of x + k.
    right = np.full_like(white, -1.0)
    if w - k - span > 0:
        right[:, : w - k - span] = near[:, k + span :]
    return np.asarray(lo, np.float32), left, right


def _best_seam(
    hit: NDArray[np.bool_],
    white: NDArray[np.float32],
    thresh: float,
    at: float,
    unit: float | None,
) -> Seam:
    """The line of ``hit`` near ``at`` that dips most (see :func:`_seam_in`)."""
    h, w = white.shape
    u = w if unit is None else unit
    k = max(1, round(0.006 * u))
    reach = max(k + 2, round(SEAM_REACH * u))
    a = max(0, round(at * w - SEAM_WINDOW * u))
    b = min(w, round(at * w + SEAM_WINDOW * u) + 1)
    band = max(1, round(SEAM_END * h))
    rows = hit[:, a:b].astype(np.float32)
    cover = rows.mean(axis=0)
    ends = np.minimum(rows[:band].mean(axis=0), rows[h - band :].mean(axis=0))
    best = int(np.argmax(cover + ends))
    x = a + best
    # The gap: the paper missing round the seam, row by row (the median row).
    window = white[:, max(0, x - reach) : x + reach + 1]
    gap = float(np.median((window < thresh).sum(axis=1)))
    return Seam((x + 0.5) / w, gap / w, float(cover[best]), float(ends[best]))


def _row_counts(short: float, long: float) -> list[int]:
    """How many cards in a row (2 to :data:`SEAM_ROW`) a rectangle ``short`` x ``long``
    may be, most first: those for which each part (``long`` / n x ``short``) has a card's
    proportions (:data:`CARD_RATIO`, within :data:`SEAM_PART_RATIO`). Side by side, n
    cards are n x 63 by 88 mm, end to end 63 by n x 88: only n and 2n can both fit (four
    side by side, 252 x 88, and two end to end, 63 x 176)."""
    counts = []
    for n in range(SEAM_ROW, 1, -1):
        a, b = long / n, short
        if min(a, b) > 0 and abs(min(a, b) / max(a, b) - CARD_RATIO) <= SEAM_PART_RATIO:
            counts.append(n)
    return counts


def _sides(corners: FloatArray) -> tuple[float, float]:
    """A quad's mean shorter and longer side."""
    p = np.asarray(corners, np.float64).reshape(4, 2)
    s = np.hypot(*(p - p[_NEXT]).T)
    a, b = (s[0] + s[2]) / 2, (s[1] + s[3]) / 2
    return float(min(a, b)), float(max(a, b))


def _split_at_seams(
    frame: Image,
    corners: FloatArray,
    thresh: float,
    scale: float,
    cfg: DetectorConfig,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> list[CardQuad]:
    """The cards of a row whose union is the quad ``corners`` (frame px), split at their
    seams (see :data:`SEAM_WIDTH`), in detection px (like ``find_cards``' found quads);
    nothing when the seams are not all seen, or the parts are no cards.

    The counts of cards the quad's proportions allow are tried, most first (four side by
    side before two end to end: two end to end show no seam at a quarter and three
    quarters of their length, a card's own middle)."""
    counts = _row_counts(*_sides(corners))
    if not counts:
        return []
    rect = _rectified_whiteness(frame, corners, SEAM_WIDTH * counts[0] / 2)
    if rect is None:
        return []
    white, to_frame = rect
    h, w = white.shape
    for n in counts:
        unit = 2 * w / n  # a pair's length: the constants' unit
        hit = _seam_hits(white, thresh, unit)
        seams = [_best_seam(hit, white, thresh, i / n, unit) for i in range(1, n)]
        if any(s.cover < SEAM_COVER_SIZED or s.ends < SEAM_ENDS_SIZED for s in seams):
            continue  # (most quads looked at: a single card)
        cuts = [0.0]
        for s in seams:
            gap = min(s.gap, 0.1 * unit / w)
            cuts += [s.at - gap / 2, s.at + gap / 2]
        cuts.append(1.0)
        quads = []
        for u0, u1 in zip(cuts[::2], cuts[1::2], strict=True):
            box = np.array([[u0 * w, 0], [u1 * w, 0], [u1 * w, h], [u0 * w, h]], np.float64)
            pts = cv2.perspectiveTransform(box.reshape(-1, 1, 2), to_frame)
            q = order_corners(np.asarray(pts, np.float64).reshape(4, 2))
            if u1 <= u0 or not _ratio_ok(q, cfg):
                break
            quads.append(CardQuad(q * scale))
        if len(quads) != n:
            continue
        sized = card_diagonal is not None and all(
            CARD_SIZE[0] - SEAM_SIZE_SLACK
            <= _size_of_a_card(q, scale, card_diagonal)
            <= CARD_SIZE[1] + SEAM_SIZE_SLACK
            for q in quads
        )
        if not sized and (
            card_diagonal is not None
            or any(s.cover < SEAM_COVER or s.ends < SEAM_ENDS for s in seams)
        ):
            continue
        # Card-shaped, no card size known: one card with a line across its middle (a
        # crease, a pen line, a shadow) or two side by side; only cloth at the seam tells
        # two cards (see SEAM_CLOTH_SHARE).
        if (
            not sized
            and _ratio_ok(corners, cfg)
            and not all(_cloth_at_seam(frame, corners, s.at, thresh) for s in seams)
        ):
            continue
        return quads
    return []


def _row_at_full_resolution(
    frame: Image,
    contour: NDArray[np.int32],
    result: CardQuad | None,
    solidity: float,
    scale: float,
    thresh: float,
    cfg: DetectorConfig,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> list[CardQuad]:
    """Two to :data:`SEAM_ROW` cards in a row, side by side or end to end, that the
    shrunk mask joined (see :data:`SEAM_WIDTH`), split at their seams; nothing for any
    other blob.

    Looked at: without the table's card size, every card-shaped quad (a pair side by side
    is one); with it, a quad clearly larger than a card; and a solid blob too long for a
    card whose proportions are a row's (:func:`_row_counts`).
    """
    inv = 1.0 / scale
    if result is not None:
        if card_diagonal is not None and not _larger_than_a_card(result, scale, card_diagonal):
            return []
        corners = result.corners * inv
    else:
        if solidity < cfg.min_solidity:
            return []
        (_, _), (bw, bh), _ = cv2.minAreaRect(contour)
        if not _row_counts(min(bw, bh), max(bw, bh)):
            return []
        fit = fit_quad(contour)
        box = fit.corners if fit is not None else cv2.boxPoints(cv2.minAreaRect(contour))
        corners = np.asarray(box, np.float64) * inv
    return _split_at_seams(frame, corners, thresh, scale, cfg, card_diagonal)


def _offset_pair(
    frame: Image,
    contour: NDArray[np.int32],
    solidity: float,
    scale: float,
    thresh: float,
    cfg: DetectorConfig,
    card_diagonal: Callable[[tuple[float, float]], float] | None,
) -> list[CardQuad]:
    """Two cards side by side or end to end, touching or a few mm apart, shifted along
    their seam (see :data:`SEAM_OFFSET_OVERLAP`): split at the seam, each card the paper on
    its side; nothing for any other blob."""
    if not cfg.min_solidity <= solidity < NOTCHED:
        return []  # a step notches the outline
    box = cv2.minAreaRect(contour)
    (cx, cy), (bw, bh), _ = box
    if card_diagonal is not None and math.hypot(bw, bh) / scale <= TOO_LARGE * card_diagonal(
        (cx / scale, cy / scale)
    ):
        return []
    corners = np.asarray(cv2.boxPoints(box), np.float64) / scale
    rect = _rectified_whiteness(frame, corners)
    if rect is None:
        return []
    white, to_frame = rect
    seam = _offset_seam(white, thresh)
    if seam is None:
        return []
    cover, ends, x, y0, y1 = seam
    if cover < SEAM_COVER_SIZED or ends < SEAM_ENDS_SIZED:
        return []
    w = white.shape[1]
    reach = max(3, round(SEAM_REACH * w))
    window = white[y0 : y1 + 1, max(0, x - reach) : x + reach + 1]
    gap = min(float(np.median((window < thresh).sum(axis=1))), 0.1 * w)
    paper = white >= thresh
    quads = []
    for u0, u1 in ((0.0, x + 0.5 - gap / 2), (x + 0.5 + gap / 2, float(w))):
        side = paper[:, max(0, math.floor(u0)) : math.ceil(u1)]
        lit = np.flatnonzero(side.mean(axis=1) >= 0.5)
        if lit.size == 0 or u1 <= u0:
            return []
        v0, v1 = float(lit[0]), float(lit[-1] + 1)
        part = np.array([[u0, v0], [u1, v0], [u1, v1], [u0, v1]], np.float64)
        pts = cv2.perspectiveTransform(part.reshape(-1, 1, 2), to_frame)
        q = order_corners(np.asarray(pts, np.float64).reshape(4, 2))
        if not _ratio_ok(q, cfg):
            return []
        quads.append(CardQuad(q * scale))
    sized = card_diagonal is not None and all(
        CARD_SIZE[0] - SEAM_SIZE_SLACK
        <= _size_of_a_card(q, scale, card_diagonal)
        <= CARD_SIZE[1] + SEAM_SIZE_SLACK
        for q in quads
    )
    if sized:
        return quads
    ok = card_diagonal is None and cover >= SEAM_COVER and ends >= SEAM_ENDS
    return quads if ok else []


def _offset_seam(
    white: NDArray[np.float32], thresh: float
) -> tuple[float, float, int, int, int] | None:
    """The likeliest seam of a shifted pair across a rectified least rectangle's
    whiteness (see :data:`SEAM_OFFSET_OVERLAP`): the share of the overlapping rows and of
    their poorer end band where it dips, its column (in its middle row), and the first and
    last overlapping row; None when no line near the middle has the step on both sides.
    The rectangle, fitted to the shrunk blob, may lie a little aslant of the cards: when
    a step is seen but its seam is not clear, lines up to :data:`SEAM_OFFSET_SLANT` aslant
    (of the rectangle's width, end to end) are tried too."""
    h, w = white.shape
    best = _offset_seam_upright(white, thresh)
    if best is None or (best[0] >= SEAM_COVER and best[1] >= SEAM_ENDS):
        return best
    centre = (h - 1) / 2
    for slant in (-1.0, -0.5, 0.5, 1.0):
        shear = slant * SEAM_OFFSET_SLANT * w / h  # x moves this much a row
        m = np.array([[1.0, shear, -shear * centre], [0.0, 1.0, 0.0]], np.float64)
        sheared = cv2.warpAffine(
            white, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        seam = _offset_seam_upright(np.asarray(sheared, np.float32), thresh)
        if seam is not None and seam[0] + seam[1] > best[0] + best[1]:
            best = seam
    return best


def _offset_seam_upright(
    white: NDArray[np.float32], thresh: float
) -> tuple[float, float, int, int, int] | None:
    """:func:`_offset_seam` for lines across ``white`` upright."""
    h, w = white.shape
    lo, left, right = _flanks(white)
    flank = np.minimum(left, right)
    hit = (flank - lo >= SEAM_DIP) & (flank >= thresh)
    a, b = round((0.5 - SEAM_WINDOW) * w), round((0.5 + SEAM_WINDOW) * w) + 1
    best: tuple[float, float, int, int, int] | None = None
    for x in range(max(0, a), min(w, b)):
        lp, rp = left[:, x] >= thresh, right[:, x] >= thresh
        both = np.flatnonzero(lp & rp)
        if both.size < SEAM_OFFSET_OVERLAP * h:
            continue
        y0, y1 = int(both[0]), int(both[-1])
        if y0 < SEAM_END * h or h - 1 - y1 < SEAM_END * h:
            continue  # no step at one end: an aligned pair (see _split_at_seams)
        # Above the overlap paper on one side only, below it on the other.
        top, bottom = slice(0, y0), slice(y1 + 1, h)
        upper = (lp[top] & ~rp[top]).mean(), (rp[top] & ~lp[top]).mean()
        lower = (lp[bottom] & ~rp[bottom]).mean(), (rp[bottom] & ~lp[bottom]).mean()
        if max(min(upper[0], lower[1]), min(upper[1], lower[0])) < SEAM_STEP:
            continue
        rows = hit[y0 : y1 + 1, x]
        band = max(1, round(SEAM_END * (y1 + 1 - y0)))
        cover = float(rows.mean())
        ends = float(min(rows[:band].mean(), rows[-band:].mean()))
        if best is None or cover + ends > best[0] + best[1]:
            best = (cover, ends, x, y0, y1)
    return best
