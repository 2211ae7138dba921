"""Synthetic card faces and table frames for the camera simulator.

Cards are drawn with OpenCV: Hershey-font rank glyphs, polygon/circle suit pips, pip
patterns or a court frame in the centre, and optionally a DataMatrix barcode encoding
``<code>:<serial>`` (for example ``QH:000123``) as printed on studio decks.

Two styles exist on purpose: :data:`PROFILE_STYLE` is used to make the "photographs"
from which a deck profile is learned, :data:`TABLE_STYLE` (a different font, stroke and
pip shape) is used for the frames the recogniser is tested on, so that a test never
matches pixel-identical templates.

A frame is a view of the layout (``calibration.table.default_layout``) through a camera
homography, with cards warped in, and the degradations of a difficulty level: perspective,
rotation, blur, noise, lighting gradients, glare and partial occlusion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import cv2
import numpy as np
import zxingcpp
from numpy.typing import NDArray

from calibration.lens import distort
from calibration.table import SLOT, Layout, Zone, default_layout
from hwsim.camera.wear import (
    Camera,
    Curl,
    Light,
    Sheen,
    Wear,
    camera_over,
    composite_curled,
    felt_sheen,
    highlight,
    lay_light,
    light_of,
    random_curl,
    random_sheen,
)
from hwsim.camera.worn_face import wear_face
from studio.cards import parse_card

Image = NDArray[np.uint8]
Noise = NDArray[np.int16]
FloatArray = NDArray[np.float64]
Level = Literal["easy", "medium", "hard"]
LEVELS: Final[tuple[Level, ...]] = ("easy", "medium", "hard")

PX_PER_MM: Final = 4.0
CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
FACE_W: Final = int(CARD_W_MM * PX_PER_MM)
FACE_H: Final = int(CARD_H_MM * PX_PER_MM)

RED: Final = (38, 30, 196)
BLACK: Final = (28, 24, 22)
FELT: Final = (52, 112, 30)


@dataclass(frozen=True, slots=True)
class CardStyle:
    """How a deck is printed."""

    font: int
    thickness: int
    rank_height_mm: float  # height of the rank glyph
    rank_max_width_mm: float
    pip_mm: float  # height of the corner suit pip
    index_left_mm: float
    index_top_mm: float
    gap_mm: float  # between rank and pip
    pip_variant: int  # small changes in pip shape
    paper: tuple[int, int, int] = (238, 240, 242)


PROFILE_STYLE: Final = CardStyle(
    font=cv2.FONT_HERSHEY_SIMPLEX,
    thickness=5,
    rank_height_mm=10.5,
    rank_max_width_mm=10.0,
    pip_mm=8.0,
    index_left_mm=3.5,
    index_top_mm=3.5,
    gap_mm=1.6,
    pip_variant=0,
)
TABLE_STYLE: Final = CardStyle(
    font=cv2.FONT_HERSHEY_DUPLEX,
    thickness=4,
    rank_height_mm=11.0,
    rank_max_width_mm=10.5,
    pip_mm=8.5,
    index_left_mm=3.0,
    index_top_mm=3.2,
    gap_mm=1.3,
    pip_variant=1,
    paper=(232, 236, 240),
)


def _suit_colour(suit: str) -> tuple[int, int, int]:
    return RED if suit in "HD" else BLACK


def draw_pip(
    img: Image,
    suit: str,
    centre: tuple[float, float],
    size: float,
    colour: tuple[int, int, int],
    *,
    flip: bool = False,
    variant: int = 0,
) -> None:
    """Draw a suit pip of height ``size`` pixels centred on ``centre``."""
    cx, cy = centre
    s = size
    sign = -1.0 if flip else 1.0
    v = 0.03 * variant

    def pt(dx: float, dy: float) -> tuple[float, float]:
        return cx + dx * s, cy + sign * dy * s

    def poly(points: list[tuple[float, float]]) -> None:
        arr = np.round(np.array(points) * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(img, [arr], colour, cv2.LINE_AA, 4)

    def circle(dx: float, dy: float, r: float) -> None:
        x, y = pt(dx, dy)
        cv2.circle(
            img, (round(x * 16), round(y * 16)), round(r * s * 16), colour, -1, cv2.LINE_AA, 4
        )

    if suit == "D":
        w = 0.36 + v
        poly([pt(0, -0.5), pt(w, 0), pt(0, 0.5), pt(-w, 0)])
    elif suit == "H":
        r = 0.26 + v / 2
        circle(-0.24, -0.22, r)
        circle(0.24, -0.22, r)
        poly([pt(-0.49, -0.14), pt(0.49, -0.14), pt(0, 0.5)])
    elif suit == "S":
        r = 0.24 + v / 2
        circle(-0.22, 0.1, r)
        circle(0.22, 0.1, r)
        poly([pt(-0.45, 0.04), pt(0.45, 0.04), pt(0, -0.5)])
        poly([pt(0, 0.1), pt(0.17 + v, 0.5), pt(-0.17 - v, 0.5)])
    elif suit == "C":
        r = 0.2 + v / 2
        circle(0, -0.27, r)
        circle(-0.25, 0.07, r)
        circle(0.25, 0.07, r)
        circle(0, 0.0, 0.12)
        poly([pt(0, 0.0), pt(0.16 + v, 0.5), pt(-0.16 - v, 0.5)])
    else:  # pragma: no cover - parse_card guards this
        raise ValueError(suit)


def _rank_text(rank: str) -> str:
    return "10" if rank == "T" else rank


def _glyph_mask(text: str, style: CardStyle, height: int, max_width: int) -> Image:
    """The rank glyph as a mask scaled to ``height`` rows (condensed when too wide)."""
    scale = 4.0
    (tw, th), base = cv2.getTextSize(text, style.font, scale, style.thickness * 3)
    pad = style.thickness * 3
    canvas = np.zeros((th + base + 2 * pad, tw + 2 * pad), np.uint8)
    cv2.putText(
        canvas, text, (pad, pad + th), style.font, scale, 255, style.thickness * 3, cv2.LINE_AA
    )
    ys, xs = np.nonzero(canvas > 100)
    canvas = canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    ch, cw = canvas.shape
    width = max(1, min(max_width, round(cw * height / ch)))
    return np.asarray(cv2.resize(canvas, (width, height), interpolation=cv2.INTER_AREA), np.uint8)


def _paste(img: Image, mask: Image, x: int, y: int, colour: tuple[int, int, int]) -> None:
    h, w = mask.shape
    roi = img[y : y + h, x : x + w].astype(np.float32)
    a = (mask.astype(np.float32) / 255.0)[..., None]
    img[y : y + h, x : x + w] = (roi * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)


def _draw_index(img: Image, rank: str, suit: str, style: CardStyle) -> None:
    mm = PX_PER_MM
    colour = _suit_colour(suit)
    glyph = _glyph_mask(
        _rank_text(rank),
        style,
        round(style.rank_height_mm * mm),
        round(style.rank_max_width_mm * mm),
    )
    col_centre = (style.index_left_mm + style.rank_max_width_mm / 2) * mm
    x = round(col_centre - glyph.shape[1] / 2)
    y = round(style.index_top_mm * mm)
    _paste(img, glyph, x, y, colour)
    pip_cy = y + glyph.shape[0] + (style.gap_mm + style.pip_mm / 2) * mm
    draw_pip(img, suit, (col_centre, pip_cy), style.pip_mm * mm, colour, variant=style.pip_variant)


# Pip centres in millimetres for the number cards (x, y).
_L, _C, _R = 21.5, 31.5, 41.5
_PIPS: Final[dict[str, list[tuple[float, float]]]] = {
    "2": [(_C, 16), (_C, 72)],
    "3": [(_C, 16), (_C, 44), (_C, 72)],
    "4": [(_L, 16), (_R, 16), (_L, 72), (_R, 72)],
    "5": [(_L, 16), (_R, 16), (_C, 44), (_L, 72), (_R, 72)],
    "6": [(_L, 16), (_R, 16), (_L, 44), (_R, 44), (_L, 72), (_R, 72)],
    "7": [(_L, 16), (_R, 16), (_C, 30), (_L, 44), (_R, 44), (_L, 72), (_R, 72)],
    "8": [(_L, 16), (_R, 16), (_C, 30), (_L, 44), (_R, 44), (_C, 58), (_L, 72), (_R, 72)],
    "9": [(_L, 16), (_R, 16), (_L, 35), (_R, 35), (_C, 44), (_L, 53), (_R, 53), (_L, 72), (_R, 72)],
    "T": [
        (_L, 16),
        (_R, 16),
        (_C, 26),
        (_L, 35),
        (_R, 35),
        (_L, 53),
        (_R, 53),
        (_C, 62),
        (_L, 72),
        (_R, 72),
    ],
}


def render_card(
    code: str, style: CardStyle = TABLE_STYLE, *, barcode: bool = False, serial: int = 0
) -> Image:
    """Render a card face, ``FACE_W`` x ``FACE_H`` BGR, portrait, index top-left."""
    card = parse_card(code)
    mm = PX_PER_MM
    img = np.zeros((FACE_H, FACE_W, 3), np.uint8)
    img[:] = style.paper
    colour = _suit_colour(card.suit)
    if card.rank in _PIPS:
        for x, y in _PIPS[card.rank]:
            draw_pip(
                img,
                card.suit,
                (x * mm, y * mm),
                10 * mm,
                colour,
                flip=y > 44,
                variant=style.pip_variant,
            )
    elif card.rank == "A":
        draw_pip(img, card.suit, (31.5 * mm, 44 * mm), 24 * mm, colour, variant=style.pip_variant)
    else:  # court card: a frame, a big letter and a pip
        x0, y0, x1, y1 = round(16 * mm), round(9 * mm), round(47 * mm), round(79 * mm)
        cv2.rectangle(img, (x0, y0), (x1, y1), (40, 150, 200), max(2, round(0.6 * mm)))
        cv2.rectangle(img, (x0 + 8, y0 + 8), (x1 - 8, y1 - 8), (200, 120, 60), 2)
        big = _glyph_mask(card.rank, style, round(22 * mm), round(24 * mm))
        _paste(img, big, (FACE_W - big.shape[1]) // 2, round(20 * mm), colour)
        draw_pip(img, card.suit, (31.5 * mm, 60 * mm), 12 * mm, colour, variant=style.pip_variant)
    if barcode:
        bc = zxingcpp.create_barcode(f"{card.code}:{serial:06d}", zxingcpp.BarcodeFormat.DataMatrix)
        sym = np.asarray(bc.to_image(scale=1, add_quiet_zones=False), np.uint8)
        side = round(26 * mm)
        sym = np.asarray(cv2.resize(sym, (side, side), interpolation=cv2.INTER_NEAREST), np.uint8)
        x, y = (FACE_W - side) // 2, round(44 * mm) - side // 2
        q = round(3 * mm)
        img[y - q : y + side + q, x - q : x + side + q] = style.paper
        img[y : y + side, x : x + side] = np.where(sym[..., None] > 127, np.array(style.paper), 25)
    _draw_index(img, card.rank, card.suit, style)
    img = np.ascontiguousarray(img[::-1, ::-1])
    _draw_index(img, card.rank, card.suit, style)
    img = np.ascontiguousarray(img[::-1, ::-1])
    cv2.rectangle(img, (0, 0), (FACE_W - 1, FACE_H - 1), (200, 200, 200), 2)
    return img


def card_mask() -> Image:
    """Mask of a card with rounded corners (``FACE_W`` x ``FACE_H``)."""
    mask = np.zeros((FACE_H, FACE_W), np.uint8)
    r = round(3.2 * PX_PER_MM)
    cv2.rectangle(mask, (r, 0), (FACE_W - 1 - r, FACE_H - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (FACE_W - 1, FACE_H - 1 - r), 255, -1)
    for cx, cy in (
        (r, r),
        (FACE_W - 1 - r, r),
        (r, FACE_H - 1 - r),
        (FACE_W - 1 - r, FACE_H - 1 - r),
    ):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


_MASK: Image | None = None


def _card_mask_cached() -> Image:
    global _MASK
    if _MASK is None:
        _MASK = card_mask()
    return _MASK


# --------------------------------------------------------------------------- levels


@dataclass(frozen=True, slots=True)
class LevelParams:
    corner_jitter_px: float  # perspective: random displacement of the layout's image corners
    zoom: tuple[float, float]
    rotation_deg: float  # cards rotate uniformly in +/- this (180 = any angle)
    flip_180: bool
    blur_sigma: tuple[float, float]
    noise_sigma: float
    light: tuple[float, float]  # min/max of a smooth brightness gradient
    glare: int  # number of glare spots
    occlusion: float  # probability that a card is partially occluded
    jpeg_quality: int  # 0 = no compression


LEVEL_PARAMS: Final[dict[str, LevelParams]] = {
    "easy": LevelParams(10, (0.98, 1.0), 8, False, (0.0, 0.3), 2.0, (0.95, 1.05), 0, 0.0, 0),
    "medium": LevelParams(45, (0.92, 1.0), 40, True, (0.4, 0.9), 4.0, (0.75, 1.1), 1, 0.0, 90),
    "hard": LevelParams(90, (0.85, 1.0), 180, True, (0.7, 1.3), 6.0, (0.55, 1.15), 2, 0.3, 75),
}


# --------------------------------------------------------------------------- scene


@dataclass(slots=True)
class PlacedCard:
    """A card on the layout: code, zone, pose on the layout (mm, degrees)."""

    code: str
    zone: str
    centre: tuple[float, float]
    angle: float
    serial: int = 0
    occluder: tuple[float, float, float, float, float] | None = (
        None  # card-frame x,y mm, axes, angle
    )
    image_quad: FloatArray = field(default_factory=lambda: np.zeros((4, 2)))
    face_down: bool = False  # its back up (the US hole card until it is turned over)

    def layout_quad(self) -> FloatArray:
        """Card corners on the layout (mm): TL, TR, BR, BL of the face."""
        hw, hh = CARD_W_MM / 2, CARD_H_MM / 2
        local = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]], dtype=np.float64)
        a = math.radians(self.angle)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(local @ rot.T + np.array(self.centre), dtype=np.float64)


def camera_homography(
    rng: np.random.Generator, level: str, size: tuple[int, int], layout: Layout
) -> FloatArray:
    """A random camera: layout mm -> image px, with the level's perspective and zoom."""
    p = LEVEL_PARAMS[level]
    w, h = size
    zoom = rng.uniform(*p.zoom)
    scale = min((w - 20) / layout.width, (h - 16) / layout.height) * zoom
    cw, ch = layout.width * scale, layout.height * scale
    x0, y0 = (w - cw) / 2, (h - ch) / 2
    dst = np.array([[x0, y0], [x0 + cw, y0], [x0 + cw, y0 + ch], [x0, y0 + ch]], dtype=np.float64)
    # A camera tilted towards the dealer: the far (top) edge shrinks; plus random jitter.
    tilt = rng.uniform(0, p.corner_jitter_px)
    dst[0, 0] += tilt
    dst[1, 0] -= tilt
    dst += rng.uniform(-p.corner_jitter_px / 3, p.corner_jitter_px / 3, size=(4, 2))
    src = np.array(
        [[0, 0], [layout.width, 0], [layout.width, layout.height], [0, layout.height]],
        dtype=np.float32,
    )
    return np.asarray(cv2.getPerspectiveTransform(src, dst.astype(np.float32)), np.float64)


def standing_camera(
    size: tuple[int, int], layout: Layout, *, far_width: float = 0.65, depth: float = 0.65
) -> FloatArray:
    """A camera where a person stands at the table (a phone photograph): layout mm ->
    image px. The far edge is ``far_width`` of the near edge, and the layout's depth is
    foreshortened to ``depth`` of what an overhead camera would show."""
    w, h = size
    near = min(w * 0.98, h * 0.95 / depth * layout.width / layout.height)
    far = near * far_width
    tall = near * depth * layout.height / layout.width
    y0 = (h - tall) / 2
    dst = np.array(
        [
            [w / 2 - far / 2, y0],
            [w / 2 + far / 2, y0],
            [w / 2 + near / 2, y0 + tall],
            [w / 2 - near / 2, y0 + tall],
        ],
        np.float32,
    )
    src = np.array(
        [[0, 0], [layout.width, 0], [layout.width, layout.height], [0, layout.height]],
        np.float32,
    )
    return np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)


def render_layout(layout: Layout, px_per_mm: float = 1.5) -> Image:
    """The printed cloth: felt, zone outlines, labels and ArUco markers."""
    w, h = round(layout.width * px_per_mm), round(layout.height * px_per_mm)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = FELT
    line = (120, 200, 220)
    for zone in layout.zones:
        pts = np.round(np.asarray(zone.polygon) * px_per_mm).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], True, line, 2, cv2.LINE_AA)
        x, y = (np.asarray(zone.polygon).min(axis=0) * px_per_mm).astype(int)
        cv2.putText(
            img, zone.name, (x + 4, y + 14), cv2.FONT_HERSHEY_PLAIN, 0.9, line, 1, cv2.LINE_AA
        )
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for m in layout.markers:
        side = round(m.size * px_per_mm)
        marker = cv2.aruco.generateImageMarker(dictionary, m.id, side)
        x, y = (
            round((m.centre[0] - m.size / 2) * px_per_mm),
            round((m.centre[1] - m.size / 2) * px_per_mm),
        )
        q = max(2, side // 6)
        img[y - q : y + side + q, x - q : x + side + q] = 255
        img[y : y + side, x : x + side] = marker[..., None]
    return img


def background(layout: Layout, homography: FloatArray, size: tuple[int, int]) -> Image:
    """The layout seen through the camera, without cards (dark outside the cloth)."""
    ppm = 1.5
    cloth = render_layout(layout, ppm)
    s = np.diag([1 / ppm, 1 / ppm, 1.0])
    out = cv2.warpPerspective(
        cloth,
        homography @ s,
        size,
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(25, 40, 20),
    )
    return np.asarray(out, np.uint8)


def composite_card(
    frame: Image,
    face: Image,
    placed: PlacedCard,
    homography: FloatArray,
    *,
    curl: Curl | None = None,
    camera: Camera | None = None,
    sheen: Sheen | None = None,
    light: Light | None = None,
    mask: Image | None = None,
) -> FloatArray:
    """Warp ``face`` into ``frame`` at its pose; return the image quad of the card.

    ``curl``: the card is bent so (see :mod:`hwsim.camera.wear`), seen by ``camera``.
    ``sheen``: its highlight, laid into ``light`` (the frame's added light).
    ``mask``: the card's outline in the face's pixels (worn: :mod:`hwsim.camera.worn_face`),
    by default the cut card's (:func:`card_mask`).
    """
    quad_img = cv2.perspectiveTransform(placed.layout_quad().reshape(-1, 1, 2), homography).reshape(
        -1, 2
    )
    x0, y0 = np.floor(quad_img.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(quad_img.max(axis=0)).astype(int) + 2
    fh, fw = frame.shape[:2]
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(fw, x1), min(fh, y1)
    if x1 <= x0 or y1 <= y0:
        return np.asarray(quad_img, np.float64)
    # Pre-shrink the face close to its size on screen, so the warp does not alias.
    side = float(np.linalg.norm(quad_img[0] - quad_img[1]))
    factor = min(1.0, 1.6 * side / FACE_W)
    mask = _card_mask_cached() if mask is None else mask
    if factor < 1.0:
        size = (max(8, round(FACE_W * factor)), max(8, round(FACE_H * factor)))
        face = np.asarray(cv2.resize(face, size, interpolation=cv2.INTER_AREA), np.uint8)
        mask = np.asarray(cv2.resize(mask, size, interpolation=cv2.INTER_AREA), np.uint8)
    if curl is not None:
        return composite_curled(
            frame,
            face,
            mask,
            centre_mm=placed.centre,
            angle_deg=placed.angle,
            card_mm=(CARD_W_MM, CARD_H_MM),
            curl=curl,
            homography=homography,
            camera=camera or camera_over(homography, (fw, fh)),
            sheen=sheen,
            light=light,
        )
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    dst = (quad_img - np.array([x0, y0])).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    roi_size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(face, m, roi_size, flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(mask, m, roi_size, flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    roi = frame[y0:y1, x0:x1].astype(np.float32)
    a = alpha[..., None]
    frame[y0:y1, x0:x1] = (roi * (1 - a) + warped.astype(np.float32) * a).astype(np.uint8)
    if sheen is not None and light is not None:
        glow = highlight((h, w), sheen, w / FACE_W)
        warped_glow = np.asarray(
            cv2.warpPerspective(glow, m, roi_size, flags=cv2.INTER_LINEAR), np.float32
        )
        cover = np.asarray(np.round(alpha * 255), np.uint8)
        lay_light(light, (x0, y0), light_of(warped_glow, sheen.tint), cover)
    return np.asarray(quad_img, np.float64)


def draw_occluder(frame: Image, placed: PlacedCard, homography: FloatArray) -> None:
    """A skin-toned blob (a finger, a hand) over part of the card."""
    if placed.occluder is None:
        return
    ox, oy, ax, ay, ang = placed.occluder
    t = np.linspace(0, 2 * math.pi, 40)
    a = math.radians(ang)
    ex = ax * np.cos(t) * math.cos(a) - ay * np.sin(t) * math.sin(a) + ox
    ey = ax * np.cos(t) * math.sin(a) + ay * np.sin(t) * math.cos(a) + oy
    local = np.stack([ex - CARD_W_MM / 2, ey - CARD_H_MM / 2], axis=1)
    r = math.radians(placed.angle)
    rot = np.array([[math.cos(r), -math.sin(r)], [math.sin(r), math.cos(r)]])
    lay = local @ rot.T + np.array(placed.centre)
    img = cv2.perspectiveTransform(lay.reshape(-1, 1, 2), homography).reshape(-1, 2)
    cv2.fillPoly(
        frame, [np.round(img).astype(np.int32).reshape(-1, 1, 2)], (120, 150, 205), cv2.LINE_AA
    )


def cast_shadow(frame: Image, polygon: FloatArray, depth: float, softness: float = 8.0) -> Image:
    """``frame`` darkened to ``1 - depth`` inside ``polygon`` (image pixels), its edge
    blurred by ``softness`` pixels: an arm's or a person's shadow over the table."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"a shadow's depth is the share of light it takes: 0..1, not {depth}")
    mask = np.zeros(frame.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(polygon).astype(np.int32).reshape(-1, 1, 2)], (1.0,))
    soft = np.asarray(cv2.GaussianBlur(mask, (0, 0), softness), np.float32)
    out = frame.astype(np.float32) * (1.0 - depth * soft)[..., None]
    return np.asarray(np.clip(out, 0, 255), np.uint8)


def shadow_band(
    frame: Image, rng: np.random.Generator, depth: float, softness: float = 15.0
) -> Image:
    """A slanted band of shadow across the frame, a third of its width at the bottom,
    somewhere between 20 % and 80 % of its width (a dealer's arm, a photographer); its
    edge blurred by ``softness`` pixels (2: the hard edge of a phone's own shadow)."""
    h, w = frame.shape[:2]
    band = shadow_band_polygon(rng.uniform(0.2, 0.8) * w, (w, h))
    return cast_shadow(frame, band, depth, softness=softness)


def shadow_band_polygon(x0: float, size: tuple[int, int]) -> FloatArray:
    """The polygon of :func:`shadow_band`'s band starting at ``x0`` on a frame of ``size``
    (width, height): 0.15 of the width wide at the top, slanting right to 0.25 at the
    bottom."""
    w, h = size
    return np.array(
        [[x0, 0], [x0 + 0.15 * w, 0], [x0 + 0.35 * w, h], [x0 + 0.1 * w, h]], np.float64
    )


def barrel(frame: Image, k1: float) -> Image:
    """``frame`` through a lens with radial distortion ``k1`` (< 0: barrel, as a wide-angle
    lens bends straight lines outward). A point at radius ``r`` from the centre, in half
    the frame's longer side, moves to ``r (1 + k1 r^2)`` (see :func:`barrel_points`)."""
    h, w = frame.shape[:2]
    f = max(w, h) / 2.0
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xd, yd = (xx - w / 2.0) / f, (yy - h / 2.0) / f
    # Each output pixel shows the undistorted point that lands on it: solved by iteration.
    # Not calibration.lens.undistort: float32 fixed-point steps over a whole frame take a
    # fifth of its time (40 ms against 270 at 720p), and a renderer of its own makes the
    # lens tests check calibration.lens against pixels it did not draw.
    # A strong barrel lands no point on the output's far corners (r (1 + k1 r^2) has a
    # maximum): the iteration does not settle there, and they show the border.
    xu, yu = xd.copy(), yd.copy()
    for _ in range(30):
        gain = 1 + k1 * (xu * xu + yu * yu)
        xu, yu = xd / gain, yd / gain
    gain = 1 + k1 * (xu * xu + yu * yu)
    lost = (np.abs(xu * gain - xd) + np.abs(yu * gain - yd)) > 1e-4
    mx, my = xu * f + w / 2.0, yu * f + h / 2.0
    mx[lost] = my[lost] = -1.0
    out = cv2.remap(
        frame,
        mx,
        my,
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(25, 40, 20),
    )
    return np.asarray(out, np.uint8)


def barrel_points(points: FloatArray, k1: float, size: tuple[int, int]) -> FloatArray:
    """Where image ``points`` (N x 2) of a ``size`` frame land through :func:`barrel`."""
    return distort(points, k1, size)


def noise_field(shape: tuple[int, ...], sigma: float, seed: int | None = None) -> Noise:
    """Gaussian sensor noise of ``shape`` (reproducible when ``seed`` is given)."""
    if seed is not None:
        cv2.setRNGSeed(seed)
    noise = np.empty(shape, np.int16)
    channels = shape[2] if len(shape) == 3 else 1
    cv2.randn(noise, (0.0,) * channels, (float(sigma),) * channels)  # type: ignore[call-overload]
    return noise


def with_noise(img: Image, noise: Noise) -> Image:
    """``img`` plus ``noise``, saturated to 0-255 (as ``np.clip`` would, at half the cost)."""
    return np.asarray(cv2.add(img, noise, dtype=cv2.CV_8U), np.uint8)


def add_noise(img: Image, sigma: float, seed: int | None = None) -> Image:
    """Gaussian sensor noise (reproducible when ``seed`` is given)."""
    return with_noise(img, noise_field(img.shape, sigma, seed))


def degrade(
    frame: Image, level: str, rng: np.random.Generator, light: Light | None = None
) -> Image:
    """Lighting gradient, glare, blur, noise and compression of a level. ``light``: light
    added by highlights (see :func:`optics`)."""
    return sensor(optics(frame, level, rng, light), level, rng)


def optics(frame: Image, level: str, rng: np.random.Generator, light: Light | None = None) -> Image:
    """What stays from frame to frame of one camera: lighting gradient, glare and blur.
    ``light`` (the cards' and cloth's sheen, :mod:`hwsim.camera.wear`) is added with the
    glare, after the lighting's gain and before the sensor clips."""
    p = LEVEL_PARAMS[level]
    h, w = frame.shape[:2]
    out = frame.astype(np.float32)
    lo, hi = p.light
    if hi - lo > 0.01:
        gx, gy = rng.uniform(-1, 1, size=2)
        yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
        ramp = gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
        ramp = (ramp - ramp.min()) / max(1e-6, float(ramp.max() - ramp.min()))
        gain_small = lo + (hi - lo) * (ramp if rng.random() < 0.5 else 1 - ramp)
        gain = cv2.resize(gain_small, (w, h), interpolation=cv2.INTER_LINEAR)
        tint = (
            rng.uniform(0.93, 1.07, size=3).astype(np.float32)
            if level != "easy"
            else np.ones(3, np.float32)
        )
        out *= gain[..., None] * tint
    if light is not None:
        out += light
    for _ in range(p.glare):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        sigma = rng.uniform(25, 70)
        strength = rng.uniform(60, 140)
        yy, xx = np.ogrid[0:h, 0:w]
        out += (strength * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sigma**2)))[..., None]
    np.clip(out, 0, 255, out=out)
    img = out.astype(np.uint8)
    sigma = rng.uniform(*p.blur_sigma)
    if sigma > 0.25:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), sigma), np.uint8)
    return img


def sensor(img: Image, level: str, rng: np.random.Generator, noise: Noise | None = None) -> Image:
    """What changes with every frame: sensor noise and compression. ``noise``: a field of
    :func:`noise_field` to add instead of drawing one (``rng`` is still advanced alike)."""
    p = LEVEL_PARAMS[level]
    if p.noise_sigma > 0:
        seed = int(rng.integers(0, 2**31))
        img = add_noise(img, p.noise_sigma, seed) if noise is None else with_noise(img, noise)
    if p.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, p.jpeg_quality])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            img = np.asarray(decoded, np.uint8)
    return np.asarray(img, np.uint8)


def slot_centres(layout: Layout, zone: str) -> list[tuple[float, float]]:
    """Centres of the non-overlapping card slots of a zone (mm), row by row."""
    pts = np.asarray(layout.zone(zone).polygon, dtype=np.float64)
    (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
    nx, ny = max(1, int((x1 - x0) // SLOT)), max(1, int((y1 - y0) // SLOT))
    mx, my = (x1 - x0 - nx * SLOT) / 2, (y1 - y0 - ny * SLOT) / 2
    return [
        (x0 + mx + (i + 0.5) * SLOT, y0 + my + (j + 0.5) * SLOT)
        for j in range(ny)
        for i in range(nx)
    ]


def random_pose(
    rng: np.random.Generator, slot: tuple[float, float], level: str
) -> tuple[tuple[float, float], float]:
    """A random angle and a position inside the slot that keeps the card in it."""
    p = LEVEL_PARAMS[level]
    angle = rng.uniform(-p.rotation_deg, p.rotation_deg)
    if p.flip_180 and rng.random() < 0.5:
        angle += 180.0
    a = math.radians(angle)
    bw = abs(CARD_W_MM * math.cos(a)) + abs(CARD_H_MM * math.sin(a))
    bh = abs(CARD_W_MM * math.sin(a)) + abs(CARD_H_MM * math.cos(a))
    jx, jy = max(0.0, (SLOT - bw) / 2 - 1), max(0.0, (SLOT - bh) / 2 - 1)
    return (slot[0] + rng.uniform(-jx, jx), slot[1] + rng.uniform(-jy, jy)), angle


def random_occluder(rng: np.random.Generator) -> tuple[float, float, float, float, float]:
    """An occluder over one part of a card that never hides both index corners.

    Positions are in the card's own frame (mm from the top-left of the face).
    """
    where = rng.integers(0, 4)
    if where == 0:  # over the top-left index
        x, y = rng.uniform(0, 18), rng.uniform(0, 25)
    elif where == 1:  # over the bottom-right index
        x, y = CARD_W_MM - rng.uniform(0, 18), CARD_H_MM - rng.uniform(0, 25)
    elif where == 2:  # over a long edge, mid-card
        x, y = (rng.choice([0.0, CARD_W_MM]), rng.uniform(35, 53))
    else:  # over a non-index corner
        x, y = (CARD_W_MM, 0.0) if rng.random() < 0.5 else (0.0, CARD_H_MM)
    return (
        float(x),
        float(y),
        float(rng.uniform(9, 15)),
        float(rng.uniform(5, 9)),
        float(rng.uniform(0, 180)),
    )


@dataclass(slots=True)
class Scene:
    """One rendered frame and its ground truth."""

    frame: Image
    cards: list[PlacedCard]
    homography: FloatArray  # layout mm -> image px
    level: str


_FACES: dict[tuple[str, CardStyle, bool, int], Image] = {}


def face(code: str, style: CardStyle, barcode: bool, serial: int) -> Image:
    key = (code, style, barcode, serial if barcode else 0)
    img = _FACES.get(key)
    if img is None:
        if len(_FACES) > 512:
            _FACES.clear()
        img = render_card(code, style, barcode=barcode, serial=serial)
        _FACES[key] = img
    return img


Faces = Mapping[str, Image]  # card code -> face image (FACE_W x FACE_H): another deck

BACK_BORDER_MM: Final = 4.0
BACK_COLOUR: Final = (40, 40, 150)  # BGR: a casino red
_BACK: list[Image] = []


def card_back() -> Image:
    """A card's back (``FACE_W`` x ``FACE_H``): a white border round a red lattice, as a
    casino deck's; no index, no pips."""
    if not _BACK:
        img = np.full((FACE_H, FACE_W, 3), 245, np.uint8)
        border = round(BACK_BORDER_MM * PX_PER_MM)
        inner = img[border:-border, border:-border]
        inner[:] = BACK_COLOUR
        step = round(5 * PX_PER_MM)
        height, width = inner.shape[:2]
        for offset in range(-height, width, step):  # a diamond lattice of thin light lines
            cv2.line(inner, (offset, 0), (offset + height, height), (90, 90, 200), 2)
            cv2.line(inner, (offset + height, 0), (offset, height), (90, 90, 200), 2)
        _BACK.append(img)
    return _BACK[0]


def compose(
    base: Image,
    cards: list[PlacedCard],
    homography: FloatArray,
    *,
    style: CardStyle = TABLE_STYLE,
    barcode: bool = False,
    faces: Faces | None = None,
    wear: Wear | None = None,
    wear_rng: np.random.Generator | None = None,
    light: Light | None = None,
) -> Image:
    """Cards (and their occluders) over a background, without degradation.

    ``faces`` replaces the drawn faces (``style``, ``barcode``) with another deck's.
    ``wear``: real cards' curl, sheen and use (:mod:`hwsim.camera.wear`), drawn from
    ``wear_rng`` alone (the scene's own stream is left as it was); the sheen goes into
    ``light`` (frame-sized, for :func:`degrade` to add), which it then needs. The
    cards' use is drawn from a child stream of ``wear_rng`` (spawned, which leaves the
    parent's draws as they were), so that curled and shiny frames stay as they were
    without it, card for card.
    """
    frame = base.copy()
    worn = wear is not None and bool(wear)
    rng = wear_rng if wear_rng is not None else np.random.default_rng(0)
    shiny = wear is not None and wear.sheen > 0
    if shiny and light is None:
        raise ValueError("a sheen needs a frame-sized light layer to go into")
    if shiny and light is not None and wear is not None:
        felt_sheen(light, rng, wear.sheen)
    size = (int(frame.shape[1]), int(frame.shape[0]))
    camera = camera_over(homography, size) if worn else None
    used = rng.spawn(1)[0] if worn and wear is not None and wear.used else None
    for placed in cards:
        if placed.face_down:
            img = card_back()
        elif faces:
            img = faces[placed.code]
        else:
            img = face(placed.code, style, barcode, placed.serial)
        curl: Curl | None = None
        sheen: Sheen | None = None
        if worn and wear is not None:
            curl = random_curl(rng, wear.curl_mm) if wear.curl_mm > 0 else None
            if shiny:
                sheen = random_sheen(rng, wear.sheen, (FACE_W, FACE_H), PX_PER_MM)
        outline: Image | None = None
        if used is not None and wear is not None:
            img, outline = wear_face(
                img,
                _card_mask_cached(),
                used,
                edge=wear.edge,
                scuffs=wear.scuffs,
                crease=wear.crease,
                fade=wear.fade,
            )
        placed.image_quad = composite_card(
            frame,
            img,
            placed,
            homography,
            curl=curl,
            camera=camera,
            sheen=sheen,
            light=light,
            mask=outline,
        )
    for placed in cards:
        draw_occluder(frame, placed, homography)
    return frame


# A cascaded hand: each card lies this far (mm, in the card's own frame: right, down) from
# the one under it, so that the lower card's top-left index stays in view.
CASCADE_DX: Final = (16.0, 21.0)
CASCADE_DY: Final = (19.0, 27.0)


def cascade_hand(
    rng: np.random.Generator, zone: Zone, codes: list[str], level: str
) -> list[PlacedCard]:
    """``codes`` laid as a dealer lays a hand: overlapping, each card on the one before.

    The hand is centred in the zone and turned (within the level's rotation) so that it
    stays inside the zone's bounding box.
    """
    p = LEVEL_PARAMS[level]
    pts = np.asarray(zone.polygon, dtype=np.float64)
    (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
    dx, dy = rng.uniform(*CASCADE_DX), rng.uniform(*CASCADE_DY)
    n = len(codes)
    # Offsets of the cards' centres from the hand's centre, in the hand's frame.
    local = [((k - (n - 1) / 2) * dx, (k - (n - 1) / 2) * dy) for k in range(n)]
    for attempt in range(20):
        angle = rng.uniform(-p.rotation_deg, p.rotation_deg) if attempt < 19 else 0.0
        if p.flip_180 and rng.random() < 0.5:
            angle += 180.0
        a = math.radians(angle)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
        cards = [
            PlacedCard(
                code,
                zone.name,
                (float(c[0]), float(c[1])),
                angle + rng.uniform(-3, 3),
                int(rng.integers(0, 999999)),
            )
            for code, off in zip(codes, local, strict=True)
            for c in [centre + rot @ np.array(off)]
        ]
        corners = np.concatenate([c.layout_quad() for c in cards])
        if (corners.min(axis=0) >= (x0, y0)).all() and (corners.max(axis=0) <= (x1, y1)).all():
            return cards
    return cards


def render_scene(
    rng: np.random.Generator,
    level: str,
    codes: list[str],
    *,
    size: tuple[int, int] = (1280, 720),
    layout: Layout | None = None,
    barcode: bool = False,
    style: CardStyle = TABLE_STYLE,
    cascade: int = 0,
    faces: Faces | None = None,
    camera: FloatArray | None = None,
    wear: Wear | None = None,
    wear_rng: np.random.Generator | None = None,
) -> Scene:
    """A random frame with ``codes`` dealt into random free slots of random zones.

    ``cascade`` > 1 deals hands of that many overlapping cards instead (see
    :func:`cascade_hand`), one hand per zone, into the dealer's and the seats' main zones.
    ``camera``: layout mm -> image px (e.g. :func:`standing_camera`); by default a random
    overhead camera of the level. ``wear``: real cards' curl and sheen, drawn from
    ``wear_rng`` (see :func:`compose`).
    """
    if level not in LEVEL_PARAMS:
        raise ValueError(f"unknown level {level!r}; levels are {', '.join(LEVELS)}")
    layout = layout or default_layout()
    h = camera_homography(rng, level, size, layout) if camera is None else camera
    light = np.zeros((size[1], size[0], 3), np.float32) if wear and wear.sheen > 0 else None
    table = layout

    def scene_of(placed: list[PlacedCard]) -> Scene:
        frame = compose(
            background(table, h, size),
            placed,
            h,
            style=style,
            barcode=barcode,
            faces=faces,
            wear=wear,
            wear_rng=wear_rng,
            light=light,
        )
        return Scene(degrade(frame, level, rng, light), placed, h, level)

    if cascade > 1:
        hands = [z for z in layout.zones if not z.name.endswith(":h2")]
        if len(codes) > cascade * len(hands):
            raise ValueError(f"{len(codes)} cards do not fit in {len(hands)} hands of {cascade}")
        chosen = rng.permutation(len(hands))[: -(-len(codes) // cascade)]
        dealt: list[PlacedCard] = []
        for i, k in enumerate(chosen):
            hand = cascade_hand(rng, hands[int(k)], codes[i * cascade : (i + 1) * cascade], level)
            # A finger only on the top card: a lower card shows one index, never hidden.
            if rng.random() < LEVEL_PARAMS[level].occlusion:
                hand[-1].occluder = random_occluder(rng)
            dealt += hand
        return scene_of(dealt)
    slots = [(z.name, c) for z in layout.zones for c in slot_centres(layout, z.name)]
    if len(codes) > len(slots):
        raise ValueError(f"{len(codes)} cards do not fit in {len(slots)} slots")
    order = rng.permutation(len(slots))[: len(codes)]
    p = LEVEL_PARAMS[level]
    cards: list[PlacedCard] = []
    for code, k in zip(codes, order, strict=True):
        zone, slot = slots[int(k)]
        centre, angle = random_pose(rng, slot, level)
        occ = random_occluder(rng) if rng.random() < p.occlusion else None
        cards.append(PlacedCard(code, zone, centre, angle, int(rng.integers(0, 999999)), occ))
    return scene_of(cards)


def render_example_photo(
    code: str,
    rng: np.random.Generator,
    *,
    style: CardStyle = PROFILE_STYLE,
    size: tuple[int, int] = (640, 480),
    faces: Faces | None = None,
    surface: tuple[int, int, int] | Image = FELT,
) -> Image:
    """A "photograph" of one card on felt (or another ``surface``: a colour, a white desk,
    or an image of ``size``, such as :func:`wood_grain`), as used to learn a deck profile."""
    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = surface
    card_h = rng.uniform(0.6, 0.8) * h
    scale = card_h / CARD_H_MM
    cx, cy = w / 2 + rng.uniform(-30, 30), h / 2 + rng.uniform(-15, 15)
    hw, hh = CARD_W_MM * scale / 2, CARD_H_MM * scale / 2
    ang = math.radians(rng.uniform(-12, 12))
    rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
    quad = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ rot.T + np.array([cx, cy])
    quad += rng.uniform(-6, 6, size=(4, 2))
    src = np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    cardimg = faces[code] if faces else render_card(code, style)
    warped = cv2.warpPerspective(cardimg, m, size)
    alpha = cv2.warpPerspective(card_mask(), m, size).astype(np.float32)[..., None] / 255
    out = img.astype(np.float32) * (1 - alpha) + warped.astype(np.float32) * alpha
    out *= rng.uniform(0.85, 1.05)
    noise = rng.normal(0, 2.0, out.shape)
    return np.asarray(np.clip(out + noise, 0, 255), np.uint8)


def wood_grain(size: tuple[int, int], rng: np.random.Generator) -> Image:
    """A wooden table top, ``size`` (w, h): brown, with wavy light and dark grain."""
    w, h = size
    y = np.mgrid[0:h, 0:w][0].astype(np.float32)
    coarse = rng.normal(0, 1, (h // 8 + 1, w // 8 + 1)).astype(np.float32)
    wobble = cv2.resize(cv2.GaussianBlur(coarse, (0, 0), 3), (w, h)) * 40
    grain = 0.6 * np.sin((y + wobble) / rng.uniform(6, 14)) + 0.4 * np.sin(
        (0.31 * y + 0.5 * wobble) / 3.0
    )
    img = np.array((55, 95, 150), np.float32) + 35 * grain[..., None]
    img += rng.normal(0, 4, img.shape)
    return np.asarray(np.clip(img, 0, 255), np.uint8)
