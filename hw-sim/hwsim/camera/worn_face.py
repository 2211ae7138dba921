"""What handling does to a card's face: worn edges, scuffs and dirt, a crease, faded ink.

Stress conditions of :class:`hwsim.camera.wear.Wear` (0 = off), drawn per card from the
wear stream and applied to the flat face and its outline mask before the card is laid
into the frame (then curled and shone on like any card). Each level is 0 to 1 (fade: 0 to
0.8); a card gets 0.5 to 1 times it, as a curl's lift and a sheen's strength are drawn.

* **Edge wear.** Cards pushed out of a shoe and scooped off the felt scuff along their
  edges: the coating and ink rub off (the paper's core shows white) and grime works in
  (grey), in a band up to 1.2 mm wide whose strength changes along the edge and is
  strongest at the corners. The corners round further (up to 2.5 mm more radius than
  the 3.2 mm cut), the edges get nicks (bites up to 1 mm deep) and some cards a chipped
  corner (a jagged cut across it, legs 2 to 5 mm): the outline the detector fits is no
  longer the cut card's.
* **Scuffs and dirt.** Faint grey strokes where a card slid over another or the table
  (4 to 20 mm long, 0.25 to 0.5 mm wide, greying ink and paper alike), dark specks of
  dirt (0.1 to 0.35 mm) and a faint smudge (a thumb's grease); a third of the strokes
  and specks lie over an index corner.
* **Crease.** A card bent sharply once keeps a line across it: a thin dark fold with a
  light ridge beside it, and the paper on one side turned slightly away from the light
  (a shading step of up to 8 %).
* **Faded ink.** A card handled long or printed thin: its ink lighter, towards the
  paper's colour (0.5: half the contrast).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]
Layer = NDArray[np.float32]

CARD_W_MM = 63.0
# The printed cut's corner radius (``render.card_mask``).
CORNER_MM = 3.2
# Where index corners lie (mm from the face's top-left, TL-style: x range, y range);
# the bottom-right one is the same turned half a turn.
INDEX_MM = ((1.0, 14.0), (1.0, 26.0))
# Colours a mark leans towards (BGR): a scuff's dull grey, dirt's dark grey, grime's
# brown-grey, the white of paper with its coating rubbed off.
SCUFF = (150.0, 150.0, 150.0)
DIRT = (62.0, 64.0, 70.0)
GRIME = (112.0, 118.0, 124.0)
PAPER_CORE = (246.0, 247.0, 248.0)


def wear_face(
    face: Image,
    mask: Image,
    rng: np.random.Generator,
    *,
    edge: float = 0.0,
    scuffs: float = 0.0,
    crease: float = 0.0,
    fade: float = 0.0,
) -> tuple[Image, Image]:
    """``face`` and its outline ``mask`` (same size, a card ``CARD_W_MM`` wide) worn so;
    draws from ``rng`` only for the conditions that are on. Ink fades first, dirt lies
    on top, the edges wear last (their grime over everything)."""
    if face.shape[:2] != mask.shape[:2]:
        raise ValueError(f"a face {face.shape[:2]} and its mask {mask.shape[:2]} differ in size")
    ppm = face.shape[1] / CARD_W_MM
    out = face.astype(np.float32)
    if fade > 0:
        fade_ink(out, mask, float(rng.uniform(0.5, 1.0) * fade))
    if scuffs > 0:
        scuff(out, rng, scuffs, ppm)
    if crease > 0:
        crease_line(out, rng, crease, ppm)
    if edge > 0:
        mask = wear_edges(out, mask, rng, edge, ppm)
    return np.asarray(np.clip(out, 0, 255), np.uint8), mask


def fade_ink(out: Layer, mask: Image, share: float) -> None:
    """Every colour moved ``share`` of the way to the paper's (the face's median colour:
    a card is mostly paper)."""
    paper = np.median(out[mask > 200], axis=0)
    out += (paper - out) * np.float32(share)


def _in_index(rng: np.random.Generator, size: tuple[int, int], ppm: float) -> tuple[float, float]:
    """A point over one of the two index corners (face pixels)."""
    w, h = size
    (x0, x1), (y0, y1) = INDEX_MM
    x, y = rng.uniform(x0, x1) * ppm, rng.uniform(y0, y1) * ppm
    return (float(w - x), float(h - y)) if rng.random() < 0.5 else (float(x), float(y))


def _lean(out: Layer, alpha: Layer, colour: tuple[float, float, float]) -> None:
    """``out`` moved towards ``colour`` by ``alpha`` (0..1 per pixel)."""
    a = alpha[..., None]
    out *= 1 - a
    out += a * np.asarray(colour, np.float32)


def scuff(out: Layer, rng: np.random.Generator, level: float, ppm: float) -> None:
    """Scuff strokes, specks of dirt and a smudge over ``out`` (see the module)."""
    h, w = out.shape[:2]
    strokes = np.zeros((h, w), np.float32)
    for _ in range(int(rng.poisson(4 * level)) + 1):
        start = (
            _in_index(rng, (w, h), ppm)
            if rng.random() < 1 / 3
            else (
                float(rng.uniform(0, w)),
                float(rng.uniform(0, h)),
            )
        )
        length = rng.uniform(4.0, 20.0) * ppm
        a = rng.uniform(0, 2 * math.pi)
        bow = rng.uniform(-0.15, 0.15) * length  # a slightly curved stroke
        p0 = np.array(start)
        p2 = p0 + length * np.array([math.cos(a), math.sin(a)])
        p1 = (p0 + p2) / 2 + bow * np.array([-math.sin(a), math.cos(a)])
        t = np.linspace(0, 1, 16)[:, None]
        pts = (1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t**2 * p2
        layer = np.zeros_like(strokes)
        width = max(1, round(rng.uniform(0.25, 0.5) * ppm))
        strength = float(rng.uniform(0.15, 0.4) * level)
        cv2.polylines(
            layer,
            [np.round(pts * 16).astype(np.int32).reshape(-1, 1, 2)],
            False,
            (strength,),
            width,
            cv2.LINE_AA,
            4,
        )
        np.maximum(strokes, layer, out=strokes)
    _lean(out, np.asarray(cv2.GaussianBlur(strokes, (0, 0), 0.25 * ppm), np.float32), SCUFF)
    specks = np.zeros((h, w), np.float32)
    for _ in range(int(rng.poisson(30 * level))):
        x, y = (
            _in_index(rng, (w, h), ppm)
            if rng.random() < 1 / 3
            else (
                float(rng.uniform(0, w)),
                float(rng.uniform(0, h)),
            )
        )
        r = max(1, round(rng.uniform(0.1, 0.35) * ppm * 16))
        strength = float(rng.uniform(0.3, 0.8) * level)
        cv2.circle(specks, (round(x * 16), round(y * 16)), r, (strength,), -1, cv2.LINE_AA, 4)
    _lean(out, specks, DIRT)
    if rng.random() < level:  # a thumb's smudge: broad and faint
        cx, cy = float(rng.uniform(0, w)), float(rng.uniform(0, h))
        sigma = rng.uniform(5.0, 15.0) * ppm
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        blot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2))
        _lean(out, np.asarray(blot * rng.uniform(0.05, 0.12) * level, np.float32), GRIME)


def crease_line(out: Layer, rng: np.random.Generator, level: float, ppm: float) -> None:
    """A fold across ``out``: a dark line, a light ridge 0.4 mm beside it, and one side
    of the card shaded darker (see the module)."""
    h, w = out.shape[:2]
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    a = rng.uniform(0, math.pi)
    strength = float(rng.uniform(0.5, 1.0) * level)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = ((xx - cx) * -math.sin(a) + (yy - cy) * math.cos(a)) / ppm  # mm from the fold
    step = 1 - 0.08 * strength * 0.5 * (1 + np.tanh(d))  # over ~1 mm
    fold = 1 - 0.3 * strength * np.exp(-((d / 0.15) ** 2))
    out *= (step * fold)[..., None].astype(np.float32)
    ridge = (0.15 * strength * np.exp(-(((d + 0.4) / 0.2) ** 2))).astype(np.float32)
    out += (255 - out) * ridge[..., None]


def wear_edges(
    out: Layer, mask: Image, rng: np.random.Generator, level: float, ppm: float
) -> Image:
    """The border of ``out`` rubbed white or grimed grey; return ``mask`` with its
    corners rounded further, nicks bitten out and perhaps a corner chipped."""
    h, w = mask.shape[:2]
    s = 16  # drawing at 1/16 px (cv2's shift)

    def at(x: float, y: float) -> tuple[int, int]:
        return round(x * s), round(y * s)

    cut = np.full((h, w), 255, np.uint8)
    r0 = CORNER_MM * ppm
    corners = ((0.0, 0.0, 1, 1), (w, 0.0, -1, 1), (w, h, -1, -1), (0.0, h, 1, -1))
    for x, y, sx, sy in corners:
        r = r0 + rng.uniform(0.0, 1.0) * level * 2.5 * ppm
        square = [at(x, y), at(x + sx * r, y), at(x + sx * r, y + sy * r), at(x, y + sy * r)]
        cv2.fillPoly(cut, [np.array(square, np.int32)], (0,), cv2.LINE_AA, 4)
        cv2.circle(cut, at(x + sx * r, y + sy * r), round(r * s), (255,), -1, cv2.LINE_AA, 4)
    for _ in range(int(rng.poisson(3 * level))):  # nicks along the sides
        side = int(rng.choice(4, p=np.array([w, h, w, h]) / (2 * (w + h))))
        t = rng.uniform(0.1, 0.9)
        x, y = ((t * w, 0.0), (w, t * h), (t * w, h), (0.0, t * h))[side]
        depth = rng.uniform(0.2, 1.0) * level * ppm
        half = depth * rng.uniform(1.0, 2.5)
        axes = (half, depth) if side % 2 == 0 else (depth, half)
        cv2.ellipse(
            cut, at(x, y), (round(axes[0] * s), round(axes[1] * s)), 0, 0, 360, (0,), -1,
            cv2.LINE_AA, 4,
        )  # fmt: skip
    if rng.random() < level / 2:  # a chipped corner: a jagged cut across it
        x, y, sx, sy = corners[int(rng.integers(0, 4))]
        a, b = (rng.uniform(2.0, 5.0, size=2) * (0.5 + 0.5 * level) * ppm).tolist()
        jag = rng.uniform(-0.25, 0.25, size=2) * min(a, b)
        mid = (x + sx * (a / 2 + jag[0]), y + sy * (b / 2 + jag[1]))
        chip = [at(x, y), at(x + sx * a, y), at(*mid), at(x, y + sy * b)]
        cv2.fillPoly(cut, [np.array(chip, np.int32)], (0,), cv2.LINE_AA, 4)
    mask = np.minimum(mask, cut)
    # The rubbed band: strongest at the outline, fading over its width, uneven along it.
    inside = np.asarray(cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 3))
    band = rng.uniform(0.4, 1.0) * level * 1.2 * ppm
    falloff = np.clip(1 - inside / max(band, 1e-3), 0, 1) ** 1.5
    coarse = rng.uniform(0, 1, (max(2, h // 24), max(2, w // 24))).astype(np.float32)
    uneven = np.asarray(cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    to_corner = np.minimum(np.minimum(xx, w - xx), 6 * ppm) + np.minimum(
        np.minimum(yy, h - yy), 6 * ppm
    )
    corner_boost = 1.5 - 0.5 * np.clip(to_corner / (6 * ppm), 0, 1)  # 1.5 at a corner
    alpha = np.clip(falloff * np.clip(uneven, 0, 1) * corner_boost * level, 0, 0.85)
    dirt = float(rng.uniform(0, 1))  # 0: rubbed white, 1: grimed grey
    tone = tuple(p + dirt * (g - p) for p, g in zip(PAPER_CORE, GRIME, strict=True))
    _lean(out, alpha.astype(np.float32), (tone[0], tone[1], tone[2]))
    return np.asarray(mask, np.uint8)
