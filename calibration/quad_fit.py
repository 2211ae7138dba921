"""Fitting a card's quadrilateral to the outline of its paper.

A card's outline is four straight sides, except where something bites into it: a finger
over an edge or a corner, glare washing a corner out, a rounded corner. The quad is the one
whose sides run along the most outline points (:func:`fit_quad`); sides are fitted to
those points alone (:func:`refine_quad`, or lines through the outline's straight runs),
so that a bite neither cuts a corner off nor tilts a side.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# A quad may add this much area to its outline's convex hull (corners cut off by a finger).
MAX_AREA_OVER_HULL: Final = 1.35
# ... or leave out this much of it (paper-bright skin or glare next to the card).
MIN_AREA_OF_HULL: Final = 0.8
# Above this the quad is "fitted": it adds more than a rounded corner's worth of area.
FITTED_AREA: Final = 1.04
# An outline point this close to a side (pixels of the outline) supports that side.
SUPPORT_TOLERANCE: Final = 1.5
# An outline point outside the quad counts against it, half as much as one on its side:
# skin or glare bright enough to pass for paper may bulge out of the card's outline.
OUTSIDE_WEIGHT: Final = 0.5
# Opposite sides of a card seen from above converge by a few degrees at most: a quad made
# of the outline's runs whose opposite sides do not is not the card (a side along a bite).
# The least-area 4-gon is not held to it: a photograph taken at a slant may converge more.
PARALLEL_MAX_DEG: Final = 8.0
# The least-area 4-gon is taken without trying others when this share of the outline
# lies on its sides (a whole card; its rounded corners are the rest).
WHOLE_CARD_SUPPORT: Final = 0.9
MAX_SIDES: Final = 8  # candidate side lines: the best-supported straight runs
# Lengths relative to the blob's size (the square root of its hull's area), not to its
# outline: a layout line glued to the card by glare makes the outline much longer.
SIMPLIFY: Final = 0.04  # straight runs are found within this distance
MIN_RUN: Final = 0.12  # a straight run this long may be a side
MERGE_ANGLE_DEG: Final = 6.0  # two runs this parallel ...
MERGE_DISTANCE: Final = 2.0  # ... and this close to each other's line are one side


def line_intersection(l1: FloatArray, l2: FloatArray) -> FloatArray | None:
    """Where two lines ``(vx, vy, x, y)`` cross (``None`` when parallel)."""
    (vx1, vy1, x1, y1), (vx2, vy2, x2, y2) = l1, l2
    den = vx1 * vy2 - vy1 * vx2
    if abs(den) < 1e-6:
        return None
    t = ((x2 - x1) * vy2 - (y2 - y1) * vx2) / den
    return np.array([x1 + t * vx1, y1 + t * vy1], dtype=np.float64)


def least_area_quad(hull: NDArray[Any]) -> FloatArray:
    """The 4-gon that adds least area to a convex hull (it restores a cut-off corner)."""
    quad = cv2.approxPolyN(hull.astype(np.float32), 4, epsilon_percentage=-1, ensure_convex=True)
    return np.asarray(quad, np.float64).reshape(-1, 2)


@dataclass(frozen=True, slots=True)
class QuadFit:
    """A fitted quad: ``corners`` (4x2, outline pixels), ``fitted`` when it adds noticeably
    more area than its outline has (corners cut off), ``from_sides`` when its sides are
    lines already fitted to the outline's straight runs (:func:`refine_quad` is not needed).
    """

    corners: FloatArray
    fitted: bool
    from_sides: bool
    support: float = 1.0  # share of the outline's points on its sides


def fit_quad(contour: NDArray[np.int32]) -> QuadFit | None:
    """The 4-gon whose sides the outline supports best.

    The least-area 4-gon round the convex hull fits a whole card. When something bites
    into the card (a finger over a corner or an edge), that 4-gon may run a side along the
    bite; the quads formed by four of the outline's straight runs, extended, are then
    tried too, and the one whose sides carry the most outline points (less half the points
    it leaves outside) wins.
    """
    hull = cv2.convexHull(contour)
    if len(hull) < 4:
        return None
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0:
        return None
    points = contour.reshape(-1, 2).astype(np.float64)
    least = least_area_quad(hull)
    best = _better(None, least, False, points, hull_area)
    if best is None or best[0] < WHOLE_CARD_SUPPORT * len(points):
        for quad in _quads_from_sides(points, math.sqrt(hull_area)):
            best = _better(best, quad, True, points, hull_area)
    if best is None:
        return None
    _, area, quad, from_sides, on_sides = best
    return QuadFit(quad, bool(area / hull_area > FITTED_AREA), from_sides, on_sides / len(points))


_Candidate = tuple[float, float, FloatArray, bool, int]  # score, area, quad, from_sides, on_sides


def _better(
    best: _Candidate | None,
    quad: FloatArray,
    from_sides: bool,
    points: FloatArray,
    hull_area: float,
) -> _Candidate | None:
    """``best`` or the candidate ``quad``, whichever the outline supports more."""
    if quad.shape != (4, 2) or not cv2.isContourConvex(quad.astype(np.float32)):
        return best
    if from_sides and not _opposite_sides_parallel(quad):
        return best
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    if not hull_area * MIN_AREA_OF_HULL <= area <= hull_area * MAX_AREA_OVER_HULL:
        return best
    on_sides, outside = outline_support(quad, points)
    score = on_sides - OUTSIDE_WEIGHT * outside
    if best is None or (score, -area) > (best[0], -best[1]):
        return score, area, quad, from_sides, on_sides
    return best


def _side_lines(points: FloatArray, size: float) -> list[tuple[float, FloatArray]]:
    """Straight runs of the outline, as ``(direction angle, line)``, pieces of one side merged.

    A finger over an edge cuts the side into two runs on one line: they are merged and
    fitted together.
    """
    closed = points.astype(np.float32).reshape(-1, 1, 2)
    simplified = cv2.approxPolyDP(closed, SIMPLIFY * size, True).reshape(-1, 2)
    idx = _vertex_indices(points, simplified)
    if len(idx) < 4:
        return []
    runs: list[FloatArray] = []
    for k, start in enumerate(idx):
        end = idx[(k + 1) % len(idx)]
        run = (
            points[start : end + 1]
            if end > start
            else np.vstack([points[start:], points[: end + 1]])
        )
        if len(run) >= 5 and np.linalg.norm(run[-1] - run[0]) >= MIN_RUN * size:
            runs.append(run)
    merged: list[FloatArray] = []
    lines: list[FloatArray] = []
    for run in runs:
        line = _fit(run)
        for k, other in enumerate(lines):
            if _collinear(line, other, run, merged[k]):
                merged[k] = np.vstack([merged[k], run])
                refit = _fit(merged[k])
                # Keep the direction of travel: the merged points are not in order.
                if refit[:2] @ other[:2] < 0:
                    refit[:2] = -refit[:2]
                lines[k] = refit
                break
        else:
            merged.append(run)
            lines.append(line)
    # Lines point along the outline's direction of travel: their angles order them round it.
    out = [(float(np.arctan2(ln[1], ln[0])), ln) for ln in lines]
    support = [len(m) for m in merged]
    order = sorted(range(len(out)), key=lambda k: -support[k])[:MAX_SIDES]
    return sorted((out[k] for k in order), key=lambda t: t[0])


def _vertex_indices(points: FloatArray, vertices: NDArray[Any]) -> list[int]:
    """The outline index of each simplified vertex, in outline order."""
    idx = sorted({int(np.argmin(np.abs(points - v).sum(axis=1))) for v in vertices})
    return idx


def _fit(run: FloatArray) -> FloatArray:
    """Line ``(vx, vy, x, y)`` through ``run``, pointing from its first to its last point."""
    line = np.asarray(
        cv2.fitLine(run.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01), np.float64
    ).ravel()
    if (run[-1] - run[0]) @ line[:2] < 0:
        line[:2] = -line[:2]
    return line


def _collinear(a: FloatArray, b: FloatArray, run_a: FloatArray, run_b: FloatArray) -> bool:
    """Do two runs lie on one line (same direction, each near the other's line)?"""
    if float(a[:2] @ b[:2]) < np.cos(np.radians(MERGE_ANGLE_DEG)):
        return False
    return (
        _distance(b, run_a.mean(axis=0)) < MERGE_DISTANCE
        and _distance(a, run_b.mean(axis=0)) < MERGE_DISTANCE
    )


def _distance(line: FloatArray, p: FloatArray) -> float:
    return float(abs((p[0] - line[2]) * line[1] - (p[1] - line[3]) * line[0]))


def _quads_from_sides(points: FloatArray, size: float) -> list[FloatArray]:
    """Quads from four of the outline's straight runs, taken in order round it."""
    lines = _side_lines(points, size)
    out = []
    for combo in itertools.combinations(range(len(lines)), 4):
        chosen = [lines[k][1] for k in combo]
        corners = [line_intersection(chosen[k - 1], chosen[k]) for k in range(4)]
        if all(c is not None for c in corners):
            out.append(np.array(corners, dtype=np.float64))
    return out


def _opposite_sides_parallel(quad: FloatArray) -> bool:
    """A card is small beside its distance to the camera: perspective leaves its opposite
    sides nearly parallel. A side tilted along a bite is not."""
    d = np.roll(quad, -1, axis=0) - quad
    angles = np.degrees(np.arctan2(d[:, 1], d[:, 0]))
    for i in (0, 1):
        diff = abs((angles[i] - angles[i + 2]) % 360.0 - 180.0)
        if diff > PARALLEL_MAX_DEG:
            return False
    return True


def outline_support(quad: FloatArray, points: FloatArray) -> tuple[int, int]:
    """How many outline points lie on the quad's sides, and how many outside it (both
    within the tolerance)."""
    d = np.roll(quad, -1, axis=0) - quad
    lengths = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)
    ux, uy = (d[:, 0] / lengths)[:, None], (d[:, 1] / lengths)[:, None]
    rx = points[None, :, 0] - quad[:, 0, None]  # side x point
    ry = points[None, :, 1] - quad[:, 1, None]
    along = rx * ux + ry * uy
    across = rx * uy - ry * ux  # positive: left of the side's direction of travel
    on_side = (np.abs(across) <= SUPPORT_TOLERANCE) & (along >= 0) & (along <= lengths[:, None])
    if cv2.contourArea(quad.astype(np.float32), oriented=True) < 0:
        across = -across
    return int(on_side.any(axis=0).sum()), int((across.max(axis=0) > SUPPORT_TOLERANCE).sum())


def refine_quad(quad: FloatArray, contour: NDArray[np.floating[Any]]) -> FloatArray:
    """Fit a line to the outline points along each side and intersect neighbouring lines.

    Each side is fitted twice: the second fit keeps only the points close to the first
    line, so that the outline of a bite (a finger over the edge) does not tilt it.
    """
    pts = contour.reshape(-1, 2).astype(np.float64)
    lines: list[FloatArray] = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        ab = b - a
        length = float(np.linalg.norm(ab))
        if length < 4:
            return quad
        u = ab / length
        rel = pts - a
        along = rel @ u
        across = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        tol = max(2.0, 0.05 * length)
        sel = (along > 0.15 * length) & (along < 0.85 * length) & (across < tol)
        line = np.array([u[0], u[1], a[0], a[1]], dtype=np.float64)
        for keep in (tol, max(2.0, 0.02 * length)):
            cand = pts[sel]
            d = np.abs((cand[:, 0] - line[2]) * line[1] - (cand[:, 1] - line[3]) * line[0])
            cand = cand[d < keep]
            if len(cand) < 5:
                break
            line = np.asarray(
                cv2.fitLine(cand.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01),
                np.float64,
            ).ravel()
        lines.append(line)
    out = []
    for i in range(4):
        p = line_intersection(lines[(i - 1) % 4], lines[i])
        if p is None or np.linalg.norm(p - quad[i]) > 0.25 * np.linalg.norm(
            quad[i] - quad[(i + 2) % 4]
        ):
            out.append(quad[i])
        else:
            out.append(p)
    return np.asarray(out, dtype=np.float64)
