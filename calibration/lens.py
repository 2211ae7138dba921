"""Radial lens distortion: the one coefficient a table calibration fits.

A wide-angle lens bends the straight lines of the layout: an ideal (pinhole) image point
at radius ``r`` from the image centre, measured in half the image's longer side, is seen
at ``r (1 + k1 r^2)``. ``k1 < 0`` is barrel distortion (the usual kind), ``k1 > 0``
pincushion. This is OpenCV's camera model with ``k1`` alone, the principal point at the
image centre and the focal length half the longer side; the higher terms matter less
than the marker corners' own error on a layout's few markers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Wider than any lens a studio mounts over a table (a quarter of the frame's corner
# pulled in is -0.2); a fit that lands on the bound is reported as such.
K1_BOUND: Final = 0.35
_GRID: Final = 71  # coarse steps over [-K1_BOUND, K1_BOUND]: 0.01 apart
_GOLDEN: Final = (5**0.5 - 1) / 2
_NEWTON_STEPS: Final = 30
_FEW: Final = 32  # points: below, undistort solves each with floats


def _normalise(size: tuple[int, int]) -> tuple[float, float, float]:
    """The model's centre (x, y) and unit radius, in pixels, of a ``size`` image."""
    w, h = size
    return w / 2.0, h / 2.0, max(w, h) / 2.0


def homography_residual(h: FloatArray, img_pts: FloatArray, lay_pts: FloatArray) -> float:
    """RMS distance (layout mm) between ``lay_pts`` and where ``h`` maps ``img_pts``."""
    proj = cv2.perspectiveTransform(img_pts.reshape(-1, 1, 2), h).reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((proj - lay_pts) ** 2, axis=1))))


def distort(points: FloatArray, k1: float, size: tuple[int, int]) -> FloatArray:
    """Where ideal image ``points`` (N x 2) of a ``size`` image are seen through the lens."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    if k1 == 0.0:
        return pts.copy()
    cx, cy, f = _normalise(size)
    if len(pts) <= _FEW:  # see undistort
        out = []
        for x, y in pts.tolist():
            px, py = (x - cx) / f, (y - cy) / f
            gain = 1 + k1 * (px * px + py * py)
            out.append((px * gain * f + cx, py * gain * f + cy))
        return np.array(out, np.float64).reshape(-1, 2)
    centre = np.array([cx, cy])
    p = (pts - centre) / f
    gain = 1 + k1 * (p * p).sum(axis=1, keepdims=True)
    return np.asarray(p * gain * f + centre, np.float64)


def undistort(points: FloatArray, k1: float, size: tuple[int, int]) -> FloatArray:
    """The ideal image points that the lens shows at ``points`` (the inverse of
    :func:`distort`). A barrel shows nothing beyond the radius where ``r (1 + k1 r^2)``
    peaks; a point seen past it (none is, but for noise) maps to that radius."""
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    if k1 == 0.0:
        return pts.copy()
    limit = math.inf if k1 > 0 else (-1.0 / (3.0 * k1)) ** 0.5
    cx, cy, f = _normalise(size)
    if len(pts) <= _FEW:
        # The live path asks for one or two points at a time, many times a frame: plain
        # floats are several times faster than arrays that small.
        out = []
        for x, y in pts.tolist():
            px, py = (x - cx) / f, (y - cy) / f
            rd = math.hypot(px, py)
            gain = _undistort_radius(rd, k1, limit) / rd if rd > 0 else 1.0
            out.append((px * gain * f + cx, py * gain * f + cy))
        return np.array(out, np.float64).reshape(-1, 2)
    centre = np.array([cx, cy])
    p = (pts - centre) / f
    rd = np.sqrt((p * p).sum(axis=1))
    ru = rd.copy()
    for _ in range(_NEWTON_STEPS):
        step = (ru + k1 * ru**3 - rd) / np.maximum(1 + 3 * k1 * ru * ru, 1e-6)
        moved = np.minimum(ru - step, limit)
        done = not np.abs(moved - ru).max() > 1e-13
        ru = moved
        if done:
            break
    scale = np.divide(ru, rd, out=np.ones_like(rd), where=rd > 0)
    return np.asarray(p * scale[:, None] * f + centre, np.float64)


def _undistort_radius(rd: float, k1: float, limit: float) -> float:
    """The ``ru`` with ``ru + k1 ru^3 = rd``, by Newton from ``ru = rd``: monotone (the
    cubic is concave for a barrel, convex for a pincushion), quadratic once near; a few
    steps for a real lens. Past a barrel's fold, its radius ``limit``."""
    ru = rd
    for _ in range(_NEWTON_STEPS):
        moved = min(ru - (ru + k1 * ru**3 - rd) / max(1 + 3 * k1 * ru * ru, 1e-6), limit)
        if abs(moved - ru) <= 1e-13:
            return moved
        ru = moved
    return ru


def _homography_fit(
    img_pts: FloatArray, lay_pts: FloatArray, k1: float, size: tuple[int, int]
) -> tuple[float, FloatArray | None]:
    """RMS layout residual (mm) and homography of the undistorted points, for one ``k1``."""
    ideal = undistort(img_pts, k1, size)
    fitted, _ = cv2.findHomography(ideal, lay_pts, 0)
    if fitted is None:
        return float("inf"), None
    h = np.asarray(fitted, np.float64)
    return homography_residual(h, ideal, lay_pts), h


def fit_radial(
    img_pts: FloatArray, lay_pts: FloatArray, size: tuple[int, int]
) -> tuple[float, FloatArray | None, float]:
    """The ``k1`` (within +-:data:`K1_BOUND`) whose undistorted image points a homography
    maps onto the layout points best: ``(k1, homography, residual_mm)``.

    A coarse scan first (the residual need not be convex that far out), then a golden
    section search about the best step.
    """

    def cost(k1: float) -> float:
        return _homography_fit(img_pts, lay_pts, k1, size)[0]

    grid = np.linspace(-K1_BOUND, K1_BOUND, _GRID)
    costs = [cost(float(k)) for k in grid]
    best = int(np.argmin(costs))
    step = float(grid[1] - grid[0])
    k1 = _golden(cost, float(grid[best]) - step, float(grid[best]) + step)
    k1 = float(np.clip(k1, -K1_BOUND, K1_BOUND))
    residual, h = _homography_fit(img_pts, lay_pts, k1, size)
    return k1, h, residual


def _golden(f: Callable[[float], float], a: float, b: float, steps: int = 40) -> float:
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2


def undistort_maps(
    view_to_ideal: FloatArray, view_size: tuple[int, int], k1: float, size: tuple[int, int]
) -> tuple[NDArray[np.int16], NDArray[np.uint16]]:
    """``cv2.remap`` maps of a view whose pixels ``view_to_ideal`` (3x3) maps to ideal
    image points: each view pixel reads the camera pixel the lens shows it at. In OpenCV's
    fixed-point form (1/32 px): remapping a 1080p frame then takes 4.0 ms, not 6.7."""
    w, h = view_size
    yy, xx = np.mgrid[0:h, 0:w]
    grid = np.column_stack([xx.ravel(), yy.ravel()]).astype(np.float64)
    ideal = cv2.perspectiveTransform(grid.reshape(-1, 1, 2), view_to_ideal)
    seen = distort(np.asarray(ideal, np.float64).reshape(-1, 2), k1, size)
    mx = seen[:, 0].reshape(h, w).astype(np.float32)
    my = seen[:, 1].reshape(h, w).astype(np.float32)
    fixed, fraction = cv2.convertMaps(mx, my, cv2.CV_16SC2)
    return np.asarray(fixed, np.int16), np.asarray(fraction, np.uint16)
