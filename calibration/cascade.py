"""Overlapping cards: split the paper blob of a cascaded hand into its cards.

A dealer lays a hand as a cascade: each card on the one before, shifted so that the lower
card's index stays in view. The camera sees one blob of paper. Its outline is made of
the cards' sides, which run along two directions (the cards of a hand lie nearly
parallel), and every card shows at least one of its corners on the outline: two sides
meeting at about a right angle, possibly only a few millimetres of each. Each such corner,
with the card's size, is a card hypothesis; hypotheses are taken, best first, while they
explain more of the blob.

The card's size along each axis is the longest side seen at a corner whose two visible
sides have a card's proportions (a corner with both sides whole).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.quad_fit import least_area_quad

FloatArray = NDArray[np.float64]

AXIS_TOLERANCE: Final = 15.0  # degrees: a side this close to the hand's axes is a card side
CORNER_ANGLES: Final = (60.0, 120.0)  # degrees: a card corner seen under perspective
RATIOS: Final = (0.5, 0.92)  # short over long side of a card seen under perspective
INSIDE_MIN: Final = 0.93  # a hypothesis must lie this much inside the blob
IOU_MIN: Final = 0.86  # the chosen cards must match the blob this well
IOU_GAIN: Final = 0.03  # a further card must improve the match by this much
# Two cascaded cards shifted just enough to show the lower index cover 1.4 cards.
AREA_MIN: Final = 1.2
# Two hypotheses this alike are one card seen from two of its corners (two cascaded cards
# shifted by the least that shows the lower index, 12 x 15 mm, overlap by 0.5).
SAME_CARD_IOU: Final = 0.7
SIZE_MARGIN: Final = 1.02
NOTCH_CLOSE: Final = 0.05  # closing kernel, as a fraction of the blob's square root area
# A side's pixels must lie this much within 2 px of the line fitted to them (one straight
# side: all but the closing's rounding), else it is two cards' sides nearly in line.
FIT_SHARE: Final = 0.8


@dataclass(frozen=True, slots=True)
class _Side:
    axis: int  # 0 or 1: which of the hand's two directions
    start: FloatArray
    end: FloatArray

    @property
    def length(self) -> float:
        return float(np.hypot(*(self.end - self.start)))


def split_cascade(contour: NDArray[np.int32]) -> list[FloatArray]:
    """The cards (4x2 corner arrays, image pixels) of a blob of overlapping cards.

    Returns an empty list when the blob is not explained by two or more cards.
    """
    area = cv2.contourArea(contour)
    if area <= 0:
        return []
    x, y, bw, bh = cv2.boundingRect(contour)
    k = max(5, round(NOTCH_CLOSE * math.sqrt(area)) | 1)
    pad = k + round(math.sqrt(area))
    origin = np.array([x - pad, y - pad], np.int32)
    blob = np.zeros((bh + 2 * pad, bw + 2 * pad), np.uint8)
    cv2.drawContours(blob, [contour - origin], -1, 255, -1)
    # Ink printed near a card's edge (an index, a pip) bites small notches out of the
    # paper: close them, so that only the steps between cards remain.
    blob = np.asarray(
        cv2.morphologyEx(
            blob, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        ),
        np.uint8,
    )
    outlines, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not outlines:
        return []
    outline = max(outlines, key=cv2.contourArea)
    peri = cv2.arcLength(outline, True)
    poly = cv2.approxPolyDP(outline, 0.008 * peri, True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 5:
        return []
    sides = [_fitted(side, outline.reshape(-1, 2), k, 0.008 * peri) for side in _sides(poly)]
    corners = _corners(sides, cv2.contourArea(poly.astype(np.float32), oriented=True) > 0)
    if len(corners) < 2:
        return []
    size = _card_size(corners)
    if size is None or cv2.countNonZero(blob) < AREA_MIN * size[0] * size[1]:
        return []  # not larger than one card: one card with a bite out of it
    iou, chosen = _choose(_hypotheses(corners, size, blob), blob)
    if not chosen:
        return []
    # A card with a bite out of it (a finger, glare) is also a notched blob: the cards
    # must explain it at least as well as one card does.
    hull = cv2.convexHull(outline)
    one = _paint(least_area_quad(hull), blob.shape)
    if iou < _iou_masks(one, blob):
        return []
    return [q + origin for q in chosen]


def _hypotheses(
    corners: list[_Corner], size: tuple[float, float], blob: NDArray[np.uint8]
) -> list[tuple[float, FloatArray]]:
    """A card of ``size`` (extent along axis 0 and 1) at each corner, if it lies in the blob."""
    # Blur and the threshold eat a pixel or so of paper all round.
    e0, e1 = size[0] * SIZE_MARGIN, size[1] * SIZE_MARGIN
    out: list[tuple[float, FloatArray]] = []
    for c in corners:
        da, db = (e0, e1) if c.axis_a == 0 else (e1, e0)
        if c.la > 1.12 * da or c.lb > 1.12 * db:
            continue  # a visible side longer than the card's
        p = c.point
        quad = np.array([p, p + da * c.ua, p + da * c.ua + db * c.ub, p + db * c.ub])
        paint = _paint(quad, blob.shape)
        inside = _count(paint & blob) / max(1, _count(paint))
        if inside >= INSIDE_MIN:
            out.append((inside, quad))
    return out


def _axis_angle(poly: FloatArray) -> float:
    """The hand's orientation (radians, modulo 90 degrees), from its outline's sides."""
    d = np.roll(poly, -1, axis=0) - poly
    lengths = np.hypot(d[:, 0], d[:, 1])
    angles = np.arctan2(d[:, 1], d[:, 0])
    # Period 90 degrees: multiply the angles by four, average as unit vectors.
    z = np.sum(lengths * np.exp(4j * angles))
    return float(np.angle(z) / 4)


def _sides(poly: FloatArray) -> list[_Side]:
    """The outline's edges that run along the hand's axes, in order, neighbours merged."""
    theta = _axis_angle(poly)
    n = len(poly)
    edges = []
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        ang = math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]) - theta) % 180.0
        if min(ang, 180 - ang) <= AXIS_TOLERANCE:
            axis = 0
        elif abs(ang - 90) <= AXIS_TOLERANCE:
            axis = 1
        else:
            axis = -1
        edges.append((axis, a, b))
    sides: list[_Side] = []
    for axis, a, b in edges:
        if axis < 0:
            continue
        if sides and sides[-1].axis == axis and np.allclose(sides[-1].end, a):
            sides[-1] = _Side(axis, sides[-1].start, b)
        else:
            sides.append(_Side(axis, a, b))
    if (
        len(sides) > 1
        and sides[0].axis == sides[-1].axis
        and np.allclose(sides[-1].end, sides[0].start)
    ):
        sides[0] = _Side(sides[0].axis, sides[-1].start, sides[0].end)  # wrapped round
        sides.pop()
    return sides


def _fitted(side: _Side, outline: NDArray[Any], trim: int, tolerance: float) -> _Side:
    """The side with its direction fitted to the outline's pixels along it.

    The polygon's vertices lie within ``tolerance`` (0.8 % of the perimeter, some 9 px at
    1440p) of the outline, so a short side -- the few millimetres of a lower card's side
    that show past the card on top -- could point several degrees off, and the card
    hypothesis built along it was skewed by as much (its far index corner 15-19 px off at
    1440p, where no index was then found). The outline's pixels within ``tolerance`` of
    the side, less ``trim`` at each end (the closing rounds the steps between cards), are
    fitted with a line, and those within 2 px of it fitted again; the ends are the
    polygon's, moved onto the line. When fewer than :data:`FIT_SHARE` of the first
    pixels lie within 2 px of the line, the side is two cards' sides nearly in line (a
    few pixels apart, merged by the polygon): no one line fits it, and the polygon's side,
    whose ends lie on the outline at the two cards' corners, is kept.
    """
    d = side.end - side.start
    length = float(np.hypot(*d))
    if length < 3 * trim:
        return side
    pts = outline.astype(np.float64)
    origin, direction = side.start, d / length
    counts: list[int] = []
    for band in (tolerance, 2.0):
        along = (pts - side.start) @ direction
        across = (pts - origin) @ np.array([-direction[1], direction[0]])
        near = (along > trim) & (along < length - trim) & (np.abs(across) <= band)
        counts.append(int(near.sum()))
        if counts[-1] < 10:
            return side
        vx, vy, x0, y0 = (
            float(v)
            for v in cv2.fitLine(
                pts[near].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01
            ).ravel()
        )
        fitted = np.array([vx, vy])
        direction = fitted if fitted @ d >= 0 else -fitted
        origin = np.array([x0, y0])
    if counts[1] < FIT_SHARE * counts[0]:
        return side

    def on_line(p: FloatArray) -> FloatArray:
        return np.asarray(origin + ((p - origin) @ direction) * direction, np.float64)

    return _Side(side.axis, on_line(side.start), on_line(side.end))


@dataclass(frozen=True, slots=True)
class _Corner:
    """A convex corner of the outline: where side ``a`` (along ``axis_a``) meets side ``b``."""

    point: FloatArray
    ua: FloatArray  # unit vector along side a, away from the corner
    ub: FloatArray
    la: float  # visible length of side a
    lb: float
    axis_a: int


def _corners(sides: list[_Side], ccw: bool) -> list[_Corner]:
    """Convex corners where a side meets the next one on the other axis."""
    out: list[_Corner] = []
    n = len(sides)
    for i in range(n):
        s1, s2 = sides[i], sides[(i + 1) % n]
        if s1.axis == s2.axis or n < 2:
            continue
        p = _intersect(s1, s2)
        if p is None:
            continue
        # The gap the two sides leave (a rounded corner, a short diagonal) must be small.
        if np.hypot(*(p - s1.end)) > 0.5 * s1.length or np.hypot(*(p - s2.start)) > 0.5 * s2.length:
            continue
        ua, ub = s1.start - p, s2.end - p
        la, lb = float(np.hypot(*ua)), float(np.hypot(*ub))
        if min(la, lb) < 3:
            continue
        ua, ub = ua / la, ub / lb
        cross = float(ua[0] * ub[1] - ua[1] * ub[0])
        angle = math.degrees(math.acos(max(-1.0, min(1.0, float(ua @ ub)))))
        convex = cross < 0 if ccw else cross > 0
        if convex and CORNER_ANGLES[0] <= angle <= CORNER_ANGLES[1]:
            out.append(_Corner(p, ua, ub, la, lb, s1.axis))
    return out


def _intersect(s1: _Side, s2: _Side) -> FloatArray | None:
    d1, d2 = s1.end - s1.start, s2.end - s2.start
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    t = ((s2.start[0] - s1.start[0]) * d2[1] - (s2.start[1] - s1.start[1]) * d2[0]) / den
    return np.asarray(s1.start + t * d1, dtype=np.float64)


def _card_size(corners: list[_Corner]) -> tuple[float, float] | None:
    """The card's extent along axis 0 and axis 1.

    Corners whose two visible sides have a card's proportions (under perspective, within
    :data:`RATIOS`) are whole: the longest of their sides along each axis gives the
    extent (a partial view only ever looks smaller; perspective makes opposite sides
    differ, and the card must cover both). Without a whole corner, the longest side seen
    along each axis.
    """
    whole = [c for c in corners if RATIOS[0] <= min(c.la, c.lb) / max(c.la, c.lb) <= RATIOS[1]]
    extent = [0.0, 0.0]
    for c in whole or corners:
        extent[c.axis_a] = max(extent[c.axis_a], c.la)
        extent[1 - c.axis_a] = max(extent[1 - c.axis_a], c.lb)
    ratio = min(extent) / max(extent) if max(extent) > 0 else 0.0
    return (extent[0], extent[1]) if RATIOS[0] <= ratio <= RATIOS[1] else None


def _paint(quad: FloatArray, shape: tuple[int, ...]) -> NDArray[np.uint8]:
    paint = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(paint, np.round(quad).astype(np.int32), 255)
    return paint


def _count(mask: NDArray[np.uint8]) -> int:
    return int(cv2.countNonZero(mask))


def _choose(
    hypotheses: list[tuple[float, FloatArray]], blob: NDArray[np.uint8]
) -> tuple[float, list[FloatArray]]:
    """Greedily the hypotheses whose union best matches the blob (intersection over union).

    A hypothesis much like a chosen card (:data:`SAME_CARD_IOU`) is that card seen from
    another of its corners.
    """
    blob_area = _count(blob)
    union = np.zeros_like(blob)
    chosen: list[FloatArray] = []
    best_iou = 0.0
    paints = [(_paint(q, blob.shape), q) for _, q in hypotheses]
    while True:
        step: tuple[float, int] | None = None
        for k, (paint, quad) in enumerate(paints):
            if any(_iou(quad, q) > SAME_CARD_IOU for q in chosen):
                continue  # the same card, seen from another of its corners
            u = union | paint
            iou = _count(u & blob) / max(1, _count(u | blob))
            if step is None or iou > step[0]:
                step = (iou, k)
        if step is None or step[0] < best_iou + IOU_GAIN:
            break
        best_iou = step[0]
        paint, quad = paints.pop(step[1])
        union |= paint
        chosen.append(quad)
    if len(chosen) < 2 or best_iou < IOU_MIN or blob_area == 0:
        return best_iou, []
    return best_iou, chosen


def _iou(a: FloatArray, b: FloatArray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = abs(cv2.contourArea(a.astype(np.float32))) + abs(cv2.contourArea(b.astype(np.float32)))
    return float(inter) / (union - float(inter)) if union > inter else 0.0


def _iou_masks(a: NDArray[np.uint8], b: NDArray[np.uint8]) -> float:
    return _count(a & b) / max(1, _count(a | b))
