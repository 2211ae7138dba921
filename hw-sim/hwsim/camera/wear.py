"""What real cards on a real table add to the renderer's flat, matte cards: curl and sheen
(here), and use: worn edges, scuffs and dirt, a crease, faded ink
(:mod:`hwsim.camera.worn_face`).

None is part of any level (the levels' frames stay bit-identical); they are stress
conditions, drawn from a random stream of their own (``render_scene(..., wear=...,
wear_rng=...)``).

* **Curl.** A card that has been bent lies not quite flat: a gentle cylindrical bend
  along its long or short axis, its edges (or its middle) lifted a few millimetres. Seen
  from above it is narrower across the bend, its lifted parts are seen a little farther
  out from the camera's axis (parallax), so its outline is no longer an exact
  quadrilateral, and the index corner on a lifted edge is tilted away (foreshortened).
  The bend also turns the paper towards or away from the light (shading).
* **Sheen.** Laminated or plastic-coated cards under studio lights show a soft specular
  highlight, a band (a strip light, a softbox) or a spot (a lamp), in the light's colour.
  It adds light on top of the print, so ink under its peak washes out towards white; it
  may lie over an index corner. Felt has a sheen too: a broad, weaker band of the light's
  colour across the cloth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]
FloatArray = NDArray[np.float64]
# Light added to a frame by highlights (BGR grey levels, float32, may exceed 255): added
# where a camera adds it, after the light's gain and before the sensor clips
# (``render.optics``), as glare is.
Light = NDArray[np.float32]

# The full card face's width in pixels (``render.FACE_W``): a sheen is drawn in its pixels.
FACE_W_PX = 252
# A studio's overhead camera: the horizontal field of view its height is inferred from.
FIELD_OF_VIEW_DEG = 60.0
# Where an index corner lies on a card (mm from the top-left of the face, TL-style):
# a highlight aimed at an index corner lands within these.
INDEX_CORNER_MM = ((2.0, 12.0), (2.0, 24.0))


@dataclass(frozen=True, slots=True)
class Wear:
    """Stress conditions of real cards (0 = off).

    ``curl_mm``: each card is bent, lifted by 0.5 to 1 times this (mm) between its lowest
    and highest line. ``sheen``: each card gets a highlight adding 0.5 to 1 times this
    share of white at its peak (1.0: ink at the peak washed out to white), half of them
    over an index corner; the felt gets a broad band of a third of that.

    Use (:mod:`hwsim.camera.worn_face`; each card gets 0.5 to 1 times the level, 0 to 1):
    ``edge``: edges rubbed white or grimed grey, corners rounded, nicked or chipped;
    ``scuffs``: grey strokes, specks of dirt and a smudge, some over an index; ``crease``:
    a fold across the card with a shading step; ``fade``: ink moved that share of the way
    to the paper's colour (0 to 0.8).
    """

    curl_mm: float = 0.0
    sheen: float = 0.0
    edge: float = 0.0
    scuffs: float = 0.0
    crease: float = 0.0
    fade: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.curl_mm <= 12.0:
            raise ValueError(f"a card's curl is 0 to 12 mm, not {self.curl_mm}")
        if not 0.0 <= self.sheen <= 1.5:
            raise ValueError(f"a sheen is 0 to 1.5 (a share of white), not {self.sheen}")
        for name in ("edge", "scuffs", "crease"):
            level = getattr(self, name)
            if not 0.0 <= level <= 1.0:
                raise ValueError(f"a card's {name} wear is 0 to 1, not {level}")
        if not 0.0 <= self.fade <= 0.8:
            raise ValueError(
                f"faded ink is 0 to 0.8 (a share of its contrast lost), not {self.fade}"
            )

    def __bool__(self) -> bool:
        return self.curl_mm > 0 or self.sheen > 0 or self.used

    @property
    def used(self) -> bool:
        """Whether a card's face is worn (edges, scuffs, a crease or faded ink)."""
        return self.edge > 0 or self.scuffs > 0 or self.crease > 0 or self.fade > 0


@dataclass(frozen=True, slots=True)
class Curl:
    """One card's bend: ``across`` "width" (the long edges lift) or "length" (the short
    edges lift), by ``lift_mm``; ``arch``: the middle is lifted instead of the edges;
    ``light``: the direction towards the light in the card's own frame (unit x, y, z)."""

    across: str
    lift_mm: float
    arch: bool
    light: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Sheen:
    """One highlight on a card, in the face's own pixels: centre, along-and-across sizes
    (sigma; equal for a spot), its angle, peak strength (share of white) and the light's
    colour (BGR gains, the strongest 1)."""

    centre: tuple[float, float]
    sigma: tuple[float, float]
    angle_deg: float
    strength: float
    tint: tuple[float, float, float]


def lamp_tint(rng: np.random.Generator) -> tuple[float, float, float]:
    """A studio light's colour: from slightly cool to slightly warm (BGR, max 1)."""
    warmth = float(rng.uniform(-0.2, 0.2))  # > 0: red over blue
    b, r = 1.0 - max(0.0, warmth), 1.0 + min(0.0, warmth)
    g = (b + r) / 2 + 0.02
    top = max(b, g, r)
    return (b / top, g / top, r / top)


def random_curl(rng: np.random.Generator, curl_mm: float) -> Curl:
    across = "width" if rng.random() < 0.5 else "length"
    lift = float(rng.uniform(0.5, 1.0) * curl_mm)
    arch = bool(rng.random() < 0.5)
    tilt = math.radians(rng.uniform(0.0, 30.0))  # the light within 30 degrees of overhead
    az = rng.uniform(0.0, 2 * math.pi)
    light = (math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt))
    return Curl(across, lift, arch, light)


def random_sheen(
    rng: np.random.Generator, sheen: float, face_size: tuple[int, int], px_per_mm: float
) -> Sheen:
    w, h = face_size
    if rng.random() < 0.5:  # over an index corner (top-left or bottom-right)
        (x0, x1), (y0, y1) = INDEX_CORNER_MM
        x, y = rng.uniform(x0, x1) * px_per_mm, rng.uniform(y0, y1) * px_per_mm
        if rng.random() < 0.5:
            x, y = w - x, h - y
    else:
        x, y = rng.uniform(0, w), rng.uniform(0, h)
    if rng.random() < 0.5:  # a band: a strip light's reflection
        across = rng.uniform(3.0, 8.0) * px_per_mm
        sigma = (across * rng.uniform(4.0, 10.0), across)
    else:  # a spot: a lamp's
        r = rng.uniform(4.0, 10.0) * px_per_mm
        sigma = (r, r * rng.uniform(0.7, 1.0))
    return Sheen(
        (float(x), float(y)),
        (float(sigma[0]), float(sigma[1])),
        float(rng.uniform(0, 180)),
        float(rng.uniform(0.5, 1.0) * sheen),
        lamp_tint(rng),
    )


def highlight(shape: tuple[int, int], s: Sheen, scale: float = 1.0) -> NDArray[np.float32]:
    """The highlight's strength per pixel (0..1) of an image ``shape`` (h, w) whose pixels
    are ``scale`` of the sheen's own."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = xx / scale - s.centre[0], yy / scale - s.centre[1]
    a = math.radians(s.angle_deg)
    along = dx * math.cos(a) + dy * math.sin(a)
    across = -dx * math.sin(a) + dy * math.cos(a)
    e = (along / s.sigma[0]) ** 2 + (across / s.sigma[1]) ** 2
    return np.asarray(s.strength * np.exp(-0.5 * e), np.float32)


def light_of(strength: NDArray[np.float32], tint: tuple[float, float, float]) -> Light:
    """The light (BGR, grey levels) of a highlight of ``strength`` (0..1 of white per
    pixel) in a light of ``tint``."""
    return np.asarray(strength[..., None] * (255.0 * np.asarray(tint, np.float32)), np.float32)


def felt_sheen(light: Light, rng: np.random.Generator, sheen: float) -> None:
    """Add the cloth's sheen to a frame's ``light``: a broad band across the frame, up to
    a third of ``sheen`` of white at its middle, in a light's colour."""
    h, w = light.shape[:2]
    centre = (float(rng.uniform(0.2, 0.8) * w), float(rng.uniform(0.2, 0.8) * h))
    across = float(rng.uniform(0.05, 0.15) * w)
    s = Sheen(
        centre,
        (across * 4.0, across),
        float(rng.uniform(0, 180)),
        float(rng.uniform(0.5, 1.0) * sheen / 3),
        lamp_tint(rng),
    )
    light += light_of(highlight((h, w), s), s.tint)


def lay_light(light: Light, roi: tuple[int, int], card_light: Light, alpha: Image) -> None:
    """A card's own highlight (``card_light``, warped like the card; ``alpha``: the card's
    cover, 0..255) over ``light`` at ``roi`` (x0, y0): the card hides what lay under it."""
    x0, y0 = roi
    h, w = alpha.shape[:2]
    a = (alpha.astype(np.float32) / 255)[..., None]
    part = light[y0 : y0 + h, x0 : x0 + w]
    part *= 1 - a
    part += card_light * a


@dataclass(frozen=True, slots=True)
class Camera:
    """Where an overhead camera is, for parallax: the point of the layout under it (mm)
    and its height (mm)."""

    nadir: tuple[float, float]
    height_mm: float


def camera_over(homography: FloatArray, size: tuple[int, int]) -> Camera:
    """An overhead camera of layout-to-image ``homography`` and frame ``size``: the layout
    point seen at the frame's centre, at the height a :data:`FIELD_OF_VIEW_DEG` lens shows
    the frame's width from."""
    inv = np.linalg.inv(homography)
    w, h = size
    pts = np.array([[[w / 2, h / 2]], [[w / 2 + 1, h / 2]]], np.float64)
    lay = cv2.perspectiveTransform(pts, inv).reshape(-1, 2)
    mm_per_px = float(np.linalg.norm(lay[1] - lay[0]))
    height = w * mm_per_px / (2 * math.tan(math.radians(FIELD_OF_VIEW_DEG) / 2))
    return Camera((float(lay[0, 0]), float(lay[0, 1])), height)


def bend_radius(half_mm: float, lift_mm: float) -> float:
    """The radius of the arc of half-length ``half_mm`` whose ends rise ``lift_mm``
    above its middle (lift = R (1 - cos(half / R)), which falls as R grows: bisection)."""
    lo, hi = half_mm / math.pi, 1e7
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if mid * (1 - math.cos(half_mm / mid)) > lift_mm:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def curled_points(
    local_mm: FloatArray,
    curl: Curl,
    card_mm: tuple[float, float],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Points of a flat card (N x 2, mm from its centre) on the bent card: their (x, y)
    seen straight down, their height, and the cosine of the paper's tilt towards the
    light relative to flat paper's (the shading)."""
    axis = 0 if curl.across == "width" else 1
    half = card_mm[axis] / 2
    r = bend_radius(half, curl.lift_mm)
    s = local_mm[:, axis]
    phi = s / r
    out = local_mm.copy()
    out[:, axis] = r * np.sin(phi)
    rise = r * (1 - np.cos(phi))
    z = curl.lift_mm - rise if curl.arch else rise
    # Normal: tilted by phi towards the middle (edges lifted) or away from it (arched).
    tilt = -np.sin(phi) if not curl.arch else np.sin(phi)
    n = np.zeros((len(s), 3))
    n[:, axis] = tilt
    n[:, 2] = np.cos(phi)
    lx, ly, lz = curl.light
    lit = (n @ np.array([lx, ly, lz])) / lz
    return out, z, np.asarray(lit, np.float64)


def composite_curled(
    frame: Image,
    face: Image,
    mask: Image,
    *,
    centre_mm: tuple[float, float],
    angle_deg: float,
    card_mm: tuple[float, float],
    curl: Curl,
    homography: FloatArray,
    camera: Camera,
    sheen: Sheen | None = None,
    light: Light | None = None,
) -> FloatArray:
    """Warp ``face`` (and its alpha ``mask``) into ``frame`` as a bent card at its pose;
    return the image points of its four corners (TL, TR, BR, BL). ``sheen`` (in the full
    face's pixels) is laid into ``light``."""
    fh, fw = face.shape[:2]
    cw, ch = card_mm
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    cx, cy = camera.nadir

    def forward(uv: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Face pixels (N x 2) -> image pixels (N x 2), and their shading."""
        local = np.stack([(uv[:, 0] / fw - 0.5) * cw, (uv[:, 1] / fh - 0.5) * ch], axis=1)
        bent, z, lit = curled_points(local, curl, card_mm)
        lay = bent @ rot.T + np.asarray(centre_mm)
        grow = camera.height_mm / (camera.height_mm - z)
        lay = np.stack([cx + (lay[:, 0] - cx) * grow, cy + (lay[:, 1] - cy) * grow], axis=1)
        img = cv2.perspectiveTransform(lay.reshape(-1, 1, 2), homography).reshape(-1, 2)
        return np.asarray(img, np.float64), lit

    corners = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64)
    edge = np.concatenate(
        [
            corners[i] + np.linspace(0, 1, 17)[:, None] * (corners[(i + 1) % 4] - corners[i])
            for i in range(4)
        ]
    )
    outline, _ = forward(edge)
    quad_img, _ = forward(corners)
    x0, y0 = np.floor(outline.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(outline.max(axis=0)).astype(int) + 2
    H, W = frame.shape[:2]
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
    if x1 <= x0 or y1 <= y0:
        return quad_img
    # Each frame pixel's face point: the flat card's inverse, corrected by iteration
    # (the bend is a small change of the flat map, so this settles in a few steps).
    flat = cv2.getPerspectiveTransform(corners.astype(np.float32), quad_img.astype(np.float32))
    flat_inv = np.linalg.inv(flat)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    p = np.stack([xx.ravel(), yy.ravel()], axis=1).astype(np.float64)

    def back(q: FloatArray) -> FloatArray:
        return np.asarray(cv2.perspectiveTransform(q.reshape(-1, 1, 2), flat_inv).reshape(-1, 2))

    target = back(p)
    uv = target.copy()
    for _ in range(8):
        seen, _ = forward(uv)
        uv = uv + (target - back(seen))
    _, lit = forward(uv)
    shape = (y1 - y0, x1 - x0)
    # As warpPerspective in render.composite_card: the face's corners at 0 and its size.
    mx = uv[:, 0].reshape(shape).astype(np.float32)
    my = uv[:, 1].reshape(shape).astype(np.float32)
    warped = cv2.remap(face, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    alpha = cv2.remap(mask, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    shade = (0.4 + 0.6 * lit.reshape(shape)).astype(np.float32)[..., None]
    al = (alpha.astype(np.float32) / 255)[..., None]
    roi = frame[y0:y1, x0:x1].astype(np.float32)
    card = np.clip(warped.astype(np.float32) * shade, 0, 255)
    frame[y0:y1, x0:x1] = (roi * (1 - al) + card * al).astype(np.uint8)
    if sheen is not None and light is not None:
        glow = highlight((fh, fw), sheen, fw / FACE_W_PX)
        warped_glow = np.asarray(
            cv2.remap(glow, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT), np.float32
        )
        lay_light(light, (x0, y0), light_of(warped_glow, sheen.tint), np.asarray(alpha, np.uint8))
    return quad_img
