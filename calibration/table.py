"""Table calibration: layout zones, the image -> layout homography, and the zone check PNG.

Coordinates
-----------
The *layout* is the printed table cloth, measured in millimetres with its origin at the
top-left corner seen from the camera, x to the right and y down (towards the players).
A :class:`TableCalibration` holds the homography that maps image pixels to layout
millimetres, fitted either from ArUco markers printed at known layout positions or from
four declared image points of the layout's corners. A wide-angle lens bends the layout's
straight lines, which no homography follows: the markers' corners also fit the lens's
radial distortion (:mod:`calibration.lens`), and image points are undistorted before the
homography maps them.

Zones
-----
Each zone is a named polygon on the layout: ``dealer``, ``seat:1`` .. ``seat:N`` (seat 1
is the first seat the dealer deals to, on the dealer's left, i.e. the camera's right in
the default layout) and ``seat:N:h2`` for the second hand of a split at seat ``N`` (a
further split is ``seat:N:h3``). A point is attributed to the smallest zone that contains
it; a point outside every zone goes to the nearest zone, with its distance
(:meth:`Layout.attribute`). A card is in a zone (:meth:`TableCalibration.zone_of`) when its
centre is inside it or at most the layout's ``zone_margin_mm`` outside it (by default half
the card's shorter side: the card then still reaches into the zone however it is turned);
farther, it is outside every zone (a dropped or burnt card, one by the shoe or the discard
tray) and is no sighting of a hand.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.json_file import read_json_file
from calibration.lens import (
    K1_BOUND,
    distort,
    fit_radial,
    homography_residual,
    undistort,
    undistort_maps,
)
from studio.atomic_file import replace_file
from studio.contract.messages import ZONE_PATTERN
from studio.errors import VisionError

TABLE_FORMAT: Final = "studio-table-calibration"
TABLE_VERSION: Final = 1
CARD_SIZE_MM: Final = (63.0, 88.0)
ARUCO_DICT: Final = "DICT_4X4_50"
LENS_MARKERS: Final = 3  # markers it takes to tell a lens's bend from the camera's angle
LENS_GAIN: Final = 0.5  # a fitted lens is kept when it halves the markers' residual
# A saved homography whose condition number is above this is singular as far as floating
# point goes (every fitted one so far: 3e2 to 2e4; pixels to millimetres keeps it small).
HOMOGRAPHY_MAX_COND: Final = 1e10

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Zone:
    """A named polygon on the layout, in millimetres."""

    name: str
    polygon: tuple[tuple[float, float], ...]

    @property
    def area(self) -> float:
        pts = np.asarray(self.polygon, dtype=np.float32)
        return float(abs(cv2.contourArea(pts)))

    @property
    def centre(self) -> tuple[float, float]:
        pts = np.asarray(self.polygon, dtype=np.float64)
        return float(pts[:, 0].mean()), float(pts[:, 1].mean())

    def signed_distance(self, x: float, y: float) -> float:
        """Positive inside, negative outside (millimetres)."""
        pts = np.asarray(self.polygon, dtype=np.float32).reshape(-1, 1, 2)
        return float(cv2.pointPolygonTest(pts, (float(x), float(y)), True))


@dataclass(frozen=True, slots=True)
class Marker:
    """An ArUco marker printed on the layout: its id, centre and side in millimetres.

    The marker is axis-aligned on the layout, its first corner top-left, clockwise.
    """

    id: int
    centre: tuple[float, float]
    size: float

    def corners(self) -> FloatArray:
        cx, cy = self.centre
        h = self.size / 2.0
        return np.array(
            [[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]],
            dtype=np.float64,
        )


@dataclass(frozen=True, slots=True)
class Layout:
    """The printed layout: size, zones and markers (millimetres)."""

    width: float
    height: float
    zones: tuple[Zone, ...]
    markers: tuple[Marker, ...] = ()
    card_size: tuple[float, float] = CARD_SIZE_MM
    # How far outside every zone a card's centre may lie and still be in the nearest;
    # None: half the card's shorter side (:attr:`margin_mm`).
    zone_margin_mm: float | None = None

    def zone(self, name: str) -> Zone:
        for z in self.zones:
            if z.name == name:
                return z
        raise VisionError(f"unknown zone {name!r}; zones are {', '.join(self.zone_names)}")

    @property
    def zone_names(self) -> list[str]:
        return [z.name for z in self.zones]

    def attribute(self, x: float, y: float) -> tuple[str, float]:
        """Return ``(zone, distance_mm)`` for a layout point; distance 0 when inside."""
        inside = [z for z in self.zones if z.signed_distance(x, y) >= 0]
        if inside:
            return min(inside, key=lambda z: z.area).name, 0.0
        best = max(self.zones, key=lambda z: z.signed_distance(x, y))
        return best.name, -best.signed_distance(x, y)

    @property
    def margin_mm(self) -> float:
        """How far (mm) outside every zone a card's centre may lie and still count as in
        the nearest one: ``zone_margin_mm``, by default half the card's diagonal (54.1 mm
        for 63 x 88 mm), the farthest a card can lie with a corner still over the zone.
        (Half its shorter side, 31.5 mm, dropped a card turned sideways 8 mm inside the
        dealer box: a review.)"""
        if self.zone_margin_mm is not None:
            return self.zone_margin_mm
        return math.hypot(*self.card_size) / 2

    def zone_at(self, x: float, y: float) -> tuple[str | None, float]:
        """:meth:`attribute`, but ``(None, distance_mm)`` for a point more than
        :attr:`margin_mm` outside every zone: no hand's card lies there."""
        name, distance = self.attribute(x, y)
        return (name if distance <= self.margin_mm else None), distance

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": "mm",
            "size": [self.width, self.height],
            "card_size": list(self.card_size),
            "zones": [
                {"name": z.name, "polygon": [list(p) for p in z.polygon]} for z in self.zones
            ],
            "markers": [
                {"id": m.id, "centre": list(m.centre), "size": m.size} for m in self.markers
            ],
            # Written only when set, so that a file without it reads as before.
            **({} if self.zone_margin_mm is None else {"zone_margin_mm": self.zone_margin_mm}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layout:
        """A layout from its JSON object; anything a person may get wrong writing one by
        hand (a misspelt key, centimetres, a zone off the cloth, a name the published
        message refuses) raises :class:`VisionError` saying what to change."""
        if not isinstance(data, dict):
            raise VisionError(
                f"invalid layout: a layout is a JSON object with size and zones, not {data!r}"
            )
        _known_keys(data, _LAYOUT_KEYS, "the layout")
        units = data.get("units", "mm")
        if units != "mm":
            raise VisionError(
                f"invalid layout: units {units!r}; a layout is in millimetres "
                '("units": "mm"): convert its size, card_size, polygons and markers'
            )
        for key in ("size", "zones"):
            if key not in data:
                raise VisionError(f"invalid layout: no {key!r} (a layout needs size and zones)")
        try:
            w, h = (float(v) for v in data["size"])
            zones = tuple(_zone_from_dict(z) for z in data["zones"])
            markers = tuple(
                Marker(
                    int(m["id"]), (float(m["centre"][0]), float(m["centre"][1])), float(m["size"])
                )
                for m in data.get("markers", [])
            )
            cs = data.get("card_size", CARD_SIZE_MM)
            card = (float(cs[0]), float(cs[1]))
            margin = data.get("zone_margin_mm")
            margin = None if margin is None else float(margin)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise VisionError(f"invalid layout: {exc}") from exc
        if margin is not None and not 0 <= margin <= max(w, h):
            raise VisionError(
                f"invalid layout: zone_margin_mm {margin:g}; how far (mm) outside every zone a "
                "card's centre may lie and still be in the nearest: 0 or more (default: half "
                "the card's shorter side)"
            )
        if not (w > 0 and h > 0):
            raise VisionError(f"invalid layout: size {w:g} x {h:g} mm; both must be positive")
        if not all(0 < side < math.inf for side in card):
            # (Until 2026-12-07 taken: calibrate table fitted it, then a ZeroDivisionError.)
            raise VisionError(
                f"invalid layout: card_size {card[0]:g} x {card[1]:g} mm; both must be "
                f"positive (a card's width and length; left out: {CARD_SIZE_MM[0]:g} x "
                f"{CARD_SIZE_MM[1]:g})"
            )
        if not zones:
            raise VisionError("invalid layout: no zones")
        names = [z.name for z in zones]
        for name in names:
            if names.count(name) > 1:
                raise VisionError(f"invalid layout: zone {name!r} is declared twice")
        for z in zones:
            _check_zone(z, w, h)
        return cls(w, h, zones, markers, card, margin)


# What a layout object and one of its zones may hold: a misspelt key ("zone", "polygone")
# is refused rather than read as absent.
_LAYOUT_KEYS: Final = ("units", "size", "card_size", "zones", "markers", "zone_margin_mm")
_ZONE_KEYS: Final = ("name", "polygon")
# The published message's zone names: a zone named otherwise would have every card in it
# refused when published.
_ZONE_NAME: Final = re.compile(ZONE_PATTERN)
_OFF_CLOTH_MM: Final = 1.0  # a polygon may touch the cloth's edge, rounding aside


def _known_keys(data: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    unknown = [k for k in data if k not in keys]
    if unknown:
        hints = []
        for k in unknown:
            near = difflib.get_close_matches(str(k), keys, n=1)
            hints.append(f"{k!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        raise VisionError(
            f"invalid layout: unknown key {', '.join(hints)} in {what}; "
            f"its keys are {', '.join(keys)}"
        )


def _zone_from_dict(z: Any) -> Zone:
    if not isinstance(z, dict):
        raise VisionError(f"invalid layout: a zone is an object with name and polygon, not {z!r}")
    _known_keys(z, _ZONE_KEYS, f"zone {z.get('name', '?')!r}")
    name = str(z["name"])
    return Zone(name, tuple((float(p[0]), float(p[1])) for p in z["polygon"]))


def _check_zone(zone: Zone, width: float, height: float) -> None:
    if not _ZONE_NAME.match(zone.name):
        raise VisionError(
            f"invalid layout: zone name {zone.name!r}; zones are named dealer, seat:N "
            "(N = 1..99) or seat:N:hK for a split's K-th hand (K = 1..9), e.g. seat:3:h2"
        )
    if len(zone.polygon) < 3:
        raise VisionError(f"invalid layout: zone {zone.name!r} needs at least 3 points")
    if zone.area <= 0:
        raise VisionError(f"invalid layout: zone {zone.name!r} has no area (its points on a line)")
    m = _OFF_CLOTH_MM
    for x, y in zone.polygon:
        if not (-m <= x <= width + m and -m <= y <= height + m):
            raise VisionError(
                f"invalid layout: zone {zone.name!r} has the point ({x:g}, {y:g}) off the "
                f"cloth ({width:g} x {height:g} mm, origin at its top-left): the size and "
                "the polygons must be in the same millimetres"
            )


# Geometry of the default layout, shared with the simulator (hw-sim/hwsim/camera).
SLOT: Final = 118.0  # pitch of a card slot; > the card's diagonal (108 mm) so slots never overlap


def _rect(x: float, y: float, w: float, h: float) -> tuple[tuple[float, float], ...]:
    return ((x, y), (x + w, y), (x + w, y + h), (x, y + h))


def _corner_markers(width: float, height: float) -> tuple[Marker, ...]:
    """ArUco markers 0..3 (30 mm), centred 24 mm in from each corner, clockwise from top-left."""
    m, e = 30.0, 24.0
    return (
        Marker(0, (e, e), m),
        Marker(1, (width - e, e), m),
        Marker(2, (width - e, height - e), m),
        Marker(3, (e, height - e), m),
    )


def default_layout(seats: int = 7) -> Layout:
    """The studio's standard layout as seen by the overhead camera.

    980 x 551 mm (16:9). The dealer zone is a row of six card slots along the top edge.
    Below it, one column per seat, numbered from the camera's right (the dealer's left),
    two slots for the main hand (``seat:N``) over one slot for a split hand
    (``seat:N:h2``). ArUco markers 0..3 (DICT_4X4_50, 30 mm) sit in the four corners.
    """
    width, height = 980.0, 551.0
    zones: list[Zone] = [Zone("dealer", _rect(136.0, 12.0, 6 * SLOT, SLOT))]
    col = (width - 20.0) / seats
    top = 12.0 + SLOT + 14.0
    for i in range(seats):
        seat = i + 1
        x = width - 10.0 - (i + 1) * col
        main_h = 2 * SLOT
        zones.append(Zone(f"seat:{seat}", _rect(x, top, col, main_h)))
        # The split box stops short of the corner markers' white borders.
        zones.append(
            Zone(f"seat:{seat}:h2", _rect(x, top + main_h, col, height - 40.0 - top - main_h))
        )
    return Layout(width, height, tuple(zones), _corner_markers(width, height))


# Geometry of the wide layout (:func:`wide_layout`): a grid of tighter slots for cards that
# lie nearly square to the cloth (turned by at most WIDE_MAX_TURN degrees), so that a
# 7-seat table still gives every hand several cards side by side without overlap.
WIDE_SLOT: Final = (90.0, 110.0)  # slot pitch (x, y) in mm
WIDE_MAX_TURN: Final = 5.0  # degrees; a card so turned spans 70 x 93 mm of a 90 x 110 mm slot
WIDE_SIZE: Final = (1280.0, 740.0)
WIDE_ROWS: Final = (3, 2)  # slot rows of a seat's main hand and of its split hand


def wide_layout(seats: int = 7) -> Layout:
    """A layout for big tables where every hand has room for its cards side by side.

    1280 x 740 mm. A dealer row of ten slots along the top edge; below it one column
    per seat, numbered from the camera's right (the dealer's left), each column
    ``(1280 - 20) / seats`` mm wide: for 7 seats two slots across, three rows for the main
    hand (``seat:N``, six slots) over two rows for a split hand (``seat:N:h2``, four slots).
    Slots have the pitch :data:`WIDE_SLOT` (90 x 110 mm), meant for cards turned by at most
    :data:`WIDE_MAX_TURN` degrees (the simulator's ``hwsim.camera.virtual.TIGHT_SLOTS``).
    ArUco markers 0..3 (DICT_4X4_50, 30 mm) sit in the four corners, at least 20 mm clear of
    the nearest card slot.
    :func:`default_layout` is unchanged; this is a separate cloth.
    """
    if not 1 <= seats <= 7:
        raise VisionError(f"a table has 1 to 7 seats, not {seats}")
    width, height = WIDE_SIZE
    pitch_x, pitch_y = WIDE_SLOT
    dealer_w = 10 * pitch_x
    zones: list[Zone] = [Zone("dealer", _rect((width - dealer_w) / 2, 10.0, dealer_w, pitch_y))]
    col = (width - 20.0) / seats
    top = 10.0 + pitch_y + 10.0
    main_rows, split_rows = WIDE_ROWS
    for i in range(seats):
        seat = i + 1
        x = width - 10.0 - (i + 1) * col
        zones.append(Zone(f"seat:{seat}", _rect(x, top, col, main_rows * pitch_y)))
        zones.append(
            Zone(f"seat:{seat}:h2", _rect(x, top + main_rows * pitch_y, col, split_rows * pitch_y))
        )
    return Layout(width, height, tuple(zones), _corner_markers(width, height))


def _aruco_detector() -> Any:
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, ARUCO_DICT))
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(dictionary, params)


def detect_markers(image: NDArray[np.uint8]) -> dict[int, FloatArray]:
    """Detect the layout's ArUco markers: ``{id: 4x2 image corners}``."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = _aruco_detector().detectMarkers(gray)
    found: dict[int, FloatArray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel(), strict=True):
        found[int(i)] = np.asarray(c, dtype=np.float64).reshape(4, 2)
    return found


@dataclass(slots=True)
class TableCalibration:
    """Image -> layout homography, the lens's distortion and the layout they refer to."""

    homography: FloatArray  # 3x3, ideal (undistorted) image pixels -> layout mm
    layout: Layout
    image_size: tuple[int, int]  # width, height of the calibration frame
    method: str  # "aruco" or "corners"
    residual_mm: float = 0.0
    markers_used: list[int] = field(default_factory=list)
    lens_k1: float = 0.0  # radial distortion (calibration.lens); 0: none
    # What the homography alone leaves when a lens was fitted too, kept or not: for the
    # operator's report, not saved.
    plain_residual_mm: float | None = None
    inverse: FloatArray = field(init=False, repr=False)  # layout mm -> ideal image pixels

    def __post_init__(self) -> None:
        try:
            self.inverse = np.asarray(np.linalg.inv(self.homography), dtype=np.float64)
        except np.linalg.LinAlgError as exc:
            raise VisionError(f"the homography has no inverse ({exc}): not a table's") from exc

    def to_layout(self, points: FloatArray) -> FloatArray:
        pts = undistort(points, self.lens_k1, self.image_size).reshape(-1, 1, 2)
        return np.asarray(cv2.perspectiveTransform(pts, self.homography), np.float64).reshape(-1, 2)

    def to_image(self, points: FloatArray) -> FloatArray:
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        ideal = np.asarray(cv2.perspectiveTransform(pts, self.inverse), np.float64)
        return distort(ideal.reshape(-1, 2), self.lens_k1, self.image_size)

    def zone_of(self, image_xy: tuple[float, float]) -> tuple[str | None, float]:
        """Zone name and distance (mm, 0 inside) of an image point: the zone ``None`` when
        the point lies farther than the layout's :attr:`Layout.margin_mm` outside every
        zone."""
        lx, ly = self.to_layout(np.array([image_xy], dtype=np.float64))[0]
        return self.layout.zone_at(float(lx), float(ly))

    def card_size_px(self, image_xy: tuple[float, float]) -> float:
        """Approximate card diagonal in pixels near an image point."""
        lx, ly = self.to_layout(np.array([image_xy], dtype=np.float64))[0]
        cw, ch = self.layout.card_size
        pts = np.array([[lx - cw / 2, ly - ch / 2], [lx + cw / 2, ly + ch / 2]], dtype=np.float64)
        a, b = self.to_image(pts)
        return float(np.hypot(*(a - b)))

    def squeeze(self, at: list[tuple[float, float]] | None = None, *, lens: bool = True) -> float:
        """How unevenly the camera sees the layout: over the layout's corners and centre
        (or the layout points ``at``), the smallest ratio of the image's scale across to
        along (1.0 straight overhead; a photograph taken standing at the table, 0.5 to 0.7).
        ``lens=False``: the camera's angle alone, without its lens's squeeze."""
        if not lens and self.lens_k1:
            flat = TableCalibration(self.homography, self.layout, self.image_size, self.method)
            return flat.squeeze(at)
        lay = self.layout
        worst = 1.0
        points = at or [
            (0, 0),
            (lay.width, 0),
            (lay.width, lay.height),
            (0, lay.height),
            (lay.width / 2, lay.height / 2),
        ]
        for x, y in points:
            a, bx, by = self.to_image(np.array([[x, y], [x + 1, y], [x, y + 1]], np.float64))
            sv = np.linalg.svd(np.column_stack([bx - a, by - a]), compute_uv=False)
            worst = min(worst, float(sv[1] / sv[0]) if sv[0] > 0 else 0.0)
        return worst

    def top_down(self, max_side: int) -> TopDownView:
        """A view straight down on the layout (plus a margin of half a card), at the
        finest scale the camera shows anywhere on it (nowhere coarser than the image),
        its longer side at most ``max_side`` pixels."""
        lay = self.layout
        margin = max(lay.card_size) / 2
        corners = np.array(
            [[0, 0], [lay.width, 0], [lay.width, lay.height], [0, lay.height]], np.float64
        )
        scale = 0.0
        for x, y in corners:
            a, bx, by = self.to_image(np.array([[x, y], [x + 1, y], [x, y + 1]], np.float64))
            scale = max(scale, float(np.hypot(*(bx - a))), float(np.hypot(*(by - a))))
        w, h = lay.width + 2 * margin, lay.height + 2 * margin
        scale = min(scale, max_side / max(w, h))
        to_view = np.array([[scale, 0, scale * margin], [0, scale, scale * margin], [0, 0, 1]])
        size = (round(w * scale), round(h * scale))
        view_cal = TableCalibration(
            np.asarray(np.linalg.inv(to_view), np.float64), lay, size, self.method
        )
        transform = np.asarray(to_view @ self.homography, np.float64)
        if self.lens_k1 == 0.0:
            return TopDownView(transform, size, view_cal)
        maps = undistort_maps(
            np.asarray(np.linalg.inv(transform), np.float64), size, self.lens_k1, self.image_size
        )
        return TopDownView(transform, size, view_cal, self.lens_k1, self.image_size, maps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TABLE_FORMAT,
            "version": TABLE_VERSION,
            "method": self.method,
            "image_size": list(self.image_size),
            "homography_image_to_layout": [list(map(float, r)) for r in self.homography],
            "residual_mm": round(self.residual_mm, 3),
            "markers_used": self.markers_used,
            "lens": {"model": "radial-k1", "k1": self.lens_k1},
            "aruco_dictionary": ARUCO_DICT,
            "layout": self.layout.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableCalibration:
        if data.get("format") != TABLE_FORMAT:
            hint = ""
            if "zones" in data:  # a layout.json given where its fitted table.json belongs
                hint = ": a layout; fit it to the camera first (studio calibrate table)"
            raise VisionError(f"not a table calibration (format {data.get('format')!r}){hint}")
        if data.get("version") != TABLE_VERSION:
            raise VisionError(f"unsupported table calibration version {data.get('version')!r}")
        try:
            h = np.asarray(data["homography_image_to_layout"], dtype=np.float64)
            raw_size = data["image_size"]
            size = (int(raw_size[0]), int(raw_size[1]))
            method = str(data["method"])
            # Files written before the lens model have none: a lens-free camera.
            lens = data.get("lens", {"model": "radial-k1", "k1": 0.0})
            model, k1 = lens["model"], float(lens["k1"])
            residual = float(data.get("residual_mm", 0.0))
            used = [int(i) for i in data.get("markers_used", [])]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise VisionError(f"invalid table calibration: {exc}") from exc
        if h.shape != (3, 3) or not np.all(np.isfinite(h)):
            raise VisionError("invalid table calibration: homography must be 3x3 and finite")
        if not np.linalg.cond(h) <= HOMOGRAPHY_MAX_COND:
            raise VisionError(
                "invalid table calibration: the homography is singular (it maps the image onto "
                "a line or a point, not the table): calibrate the table again "
                "(studio calibrate table)"
            )
        if len(raw_size) != 2 or not (size[0] > 0 and size[1] > 0):
            raise VisionError(
                f"invalid table calibration: image_size {raw_size!r}; the calibration frame's "
                "width and height in pixels"
            )
        if "layout" not in data:
            raise VisionError("invalid table calibration: no 'layout' (its zones)")
        if model != "radial-k1":
            raise VisionError(f"invalid table calibration: unknown lens model {model!r}")
        if not abs(k1) <= K1_BOUND:
            raise VisionError(
                f"invalid table calibration: lens k1 {k1} is outside -{K1_BOUND}..{K1_BOUND}"
            )
        return cls(
            h,
            Layout.from_dict(data["layout"]),
            size,
            method,
            residual,
            used,
            k1,
        )

    def save(self, path: Path) -> None:
        """Write the calibration as JSON, replacing ``path`` whole (a failure keeps the old one)."""
        replace_file(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> TableCalibration:
        data = read_json_file(path, "table calibration")
        if not isinstance(data, dict):
            raise VisionError(f"table calibration {path} is not a JSON object")
        return cls.from_dict(data)


def plane_of_card(
    corners: FloatArray, image_size: tuple[int, int], card_size: tuple[float, float] = CARD_SIZE_MM
) -> TableCalibration | None:
    """The table's plane as one card lying on it shows it, when nothing else tells it.

    ``corners`` are the card's image corners, clockwise from a short side (a
    :class:`calibration.detect.CardQuad`'s). The plane's "layout" is the part of it the
    image shows, without zones; ``None`` when the image reaches past the horizon.
    """
    cw, ch = card_size
    card = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    h = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), card)
    w, hgt = image_size
    seen = np.array([[0, 0, 1], [w, 0, 1], [w, hgt, 1], [0, hgt, 1]], np.float64) @ h.T
    if np.any(seen[:, 2] <= 0):
        return None
    pts = seen[:, :2] / seen[:, 2:]
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    layout = Layout(float(x1 - x0), float(y1 - y0), (), (), (cw, ch))
    return TableCalibration(np.asarray(shift @ h, np.float64), layout, image_size, "card")


@dataclass(frozen=True, slots=True)
class TopDownView:
    """The layout seen straight down: ``transform`` maps image pixels to view pixels, and
    ``calibration`` maps view pixels to the layout (see :meth:`TableCalibration.top_down`)."""

    transform: FloatArray  # ideal (undistorted) image pixels -> view pixels
    size: tuple[int, int]
    calibration: TableCalibration
    lens_k1: float = 0.0
    image_size: tuple[int, int] = (0, 0)  # the camera's, for the lens
    # cv2.remap maps that undistort as they warp (a lens, see calibration.lens)
    maps: tuple[NDArray[np.int16], NDArray[np.uint16]] | None = field(default=None, repr=False)

    def warp(self, image: NDArray[np.uint8]) -> NDArray[np.uint8]:
        if self.maps is not None:
            mx, my = self.maps
            return np.asarray(cv2.remap(image, mx, my, cv2.INTER_LINEAR), np.uint8)
        return np.asarray(
            cv2.warpPerspective(image, self.transform, self.size, flags=cv2.INTER_LINEAR),
            np.uint8,
        )

    def to_view(self, points: FloatArray) -> FloatArray:
        pts = undistort(points, self.lens_k1, self.image_size).reshape(-1, 1, 2)
        moved = cv2.perspectiveTransform(pts, self.transform)
        return np.asarray(moved, np.float64).reshape(-1, 2)

    def to_image(self, points: FloatArray) -> FloatArray:
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
        inv = np.linalg.inv(self.transform)
        ideal = np.asarray(cv2.perspectiveTransform(pts, inv), np.float64).reshape(-1, 2)
        return distort(ideal, self.lens_k1, self.image_size)


def calibrate_from_markers(
    image: NDArray[np.uint8], layout: Layout, *, lens: bool = True
) -> TableCalibration:
    """Fit the homography from the layout's ArUco markers (at least two must be visible).

    With ``lens`` and three markers or more, the lens's radial distortion is fitted too
    (:func:`calibration.lens.fit_radial`), and kept when it explains the markers: when it
    takes the residual to :data:`LENS_GAIN` of the plain homography's or less. (A camera
    without a lens to speak of fits a k1 of a few thousandths from the marker corners'
    own error, which would only cost accuracy.) Two markers leave a lens unknown.
    """
    if not layout.markers:
        raise VisionError("the layout declares no markers; declare the four corners instead")
    found = detect_markers(image)
    known = {m.id: m for m in layout.markers}
    used = sorted(i for i in found if i in known)
    if len(used) < 2:
        raise VisionError(
            f"found {len(used)} of the layout's markers {sorted(known)} "
            f"(detected ids: {sorted(found) or 'none'}); need at least 2"
        )
    img_pts = np.concatenate([found[i] for i in used]).astype(np.float64)
    lay_pts = np.concatenate([known[i].corners() for i in used]).astype(np.float64)
    height, width = image.shape[:2]
    size = (width, height)
    fitted, _ = cv2.findHomography(img_pts, lay_pts, 0)
    if fitted is None:
        raise VisionError("could not fit a homography to the markers (degenerate positions)")
    h: FloatArray = np.asarray(fitted, dtype=np.float64)
    residual = homography_residual(h, img_pts, lay_pts)
    k1, plain = 0.0, None
    if lens and len(used) >= LENS_MARKERS:
        plain = residual
        bent_k1, bent_h, bent_residual = fit_radial(img_pts, lay_pts, size)
        if bent_h is not None and bent_residual <= LENS_GAIN * residual:
            k1, h, residual = bent_k1, bent_h, bent_residual
    return TableCalibration(h, layout, size, "aruco", residual, used, k1, plain)


def calibrate_from_corners(
    image_size: tuple[int, int], corners: list[tuple[float, float]], layout: Layout
) -> TableCalibration:
    """Fit the homography from the image positions of the layout's four corners.

    ``corners`` are the layout's top-left, top-right, bottom-right and bottom-left corners
    as seen in the image.
    """
    if len(corners) != 4:
        raise VisionError(f"need exactly 4 corners (TL, TR, BR, BL), got {len(corners)}")
    img_pts = np.asarray(corners, dtype=np.float64)
    lay_pts = np.array(
        [[0, 0], [layout.width, 0], [layout.width, layout.height], [0, layout.height]],
        dtype=np.float64,
    )
    check_corner_order(img_pts, image_size)
    h = np.asarray(
        cv2.getPerspectiveTransform(img_pts.astype(np.float32), lay_pts.astype(np.float32)),
        np.float64,
    )
    residual = homography_residual(h, img_pts, lay_pts)
    return TableCalibration(h, layout, image_size, "corners", residual)


_CORNER_NAMES: Final = ("TL", "TR", "BR", "BL")
OUTSIDE_SHARE: Final = 0.1  # of the image's size: how far out a declared corner may lie


def check_corner_order(points: FloatArray, image_size: tuple[int, int]) -> None:
    """Refuse four declared corners that cannot be the cloth's TL, TR, BR, BL in this image.

    Any four points fit a homography exactly, so a wrong order is never seen in the fit's
    residual: crossed over (a bow tie) or mirrored (anticlockwise in the image, as no
    camera looking down on a cloth sees it), every zone would land somewhere wrong.
    A point far outside the image is a typing slip or another image's pixels (one just
    outside, a corner out of the frame found by extending the cloth's edges, is warned of
    by :func:`corner_warnings`).
    """
    w, h = image_size
    mw, mh = OUTSIDE_SHARE * w, OUTSIDE_SHARE * h
    for name, (x, y) in zip(_CORNER_NAMES, points, strict=True):
        if not (-mw <= x <= w + mw and -mh <= y <= h + mh):
            raise VisionError(
                f"corner {name} ({x:g},{y:g}) lies outside the {w}x{h} image: corners are "
                "pixels of the image given with --image (read them off that file, not a "
                "resized copy); if the cloth's corner is out of the frame, photograph it "
                "with all four corners in view"
            )
    if abs(cv2.contourArea(points.astype(np.float32))) < 100:
        raise VisionError("the four corners are degenerate (collinear or coincident)")
    # The turn at each corner: all one sign round a convex quad, clockwise in image
    # coordinates (y down) when the order is TL, TR, BR, BL.
    turns = []
    for i in range(4):
        (ax, ay), (bx, by) = (
            points[(i + 1) % 4] - points[i],
            points[(i + 2) % 4] - points[(i + 1) % 4],
        )
        turns.append(float(ax * by - ay * bx))
    if not (all(t > 0 for t in turns) or all(t < 0 for t in turns)):
        raise VisionError(
            "the four corners cross over or bend inwards: give them in order round the "
            "cloth, TL, TR, BR, BL (as the camera sees them, clockwise)"
        )
    if turns[0] < 0:
        clockwise = points[[0, 3, 2, 1]]
        first = int(np.argmin(clockwise.sum(axis=1)))  # the one nearest the image's top-left
        order = ";".join(f"{x:g},{y:g}" for x, y in np.roll(clockwise, -first, axis=0))
        raise VisionError(
            "the four corners go anticlockwise in the image; TL, TR, BR, BL go clockwise "
            "(a mirrored order fits as well and puts every zone on the wrong side): "
            f"clockwise from the top-left they are --corners {order!r} (a layout's y runs "
            "down from its top-left corner; a camera that mirrors its picture must have "
            "mirroring turned off)"
        )


def corner_warnings(points: FloatArray, image_size: tuple[int, int]) -> list[str]:
    """What to check about four declared corners :func:`check_corner_order` accepted.

    The layout's origin is the cloth's top-left as the camera sees it, so a list started
    from another corner turns every zone by 90 or 180 degrees (right only when the
    layout was drawn from the other side of the table). A corner out of the frame can
    only have been estimated.
    """
    warnings = []
    w, h = image_size
    for name, (x, y) in zip(_CORNER_NAMES, points, strict=True):
        if not (0 <= x <= w and 0 <= y <= h):
            warnings.append(
                f"corner {name} ({x:g},{y:g}) is outside the {w}x{h} image: the zones near "
                "it are as good as its estimate; check them on --check"
            )
    first = int(np.argmin(points.sum(axis=1)))  # the corner nearest the image's top-left
    if first != 0:
        turned = ";".join(f"{x:g},{y:g}" for x, y in np.roll(points, -first, axis=0))
        warnings.append(
            f"the corner given as TL is the cloth's {_CORNER_NAMES[(4 - first) % 4]} in the "
            "image: the layout is turned on it. Unless your layout.json was drawn from the "
            f"other side of the table, start from the top-left: --corners {turned!r}"
        )
    return warnings


def parse_corners(text: str) -> list[tuple[float, float]]:
    """Parse ``"x1,y1;x2,y2;x3,y3;x4,y4"``."""
    try:
        pts = [tuple(float(v) for v in p.split(",")) for p in text.replace(" ", "").split(";") if p]
    except ValueError as exc:
        raise VisionError(f"bad corners {text!r}: expected 'x1,y1;x2,y2;x3,y3;x4,y4'") from exc
    if any(len(p) != 2 for p in pts):
        raise VisionError(f"bad corners {text!r}: expected four 'x,y' pairs separated by ';'")
    if len(pts) != 4:
        raise VisionError(
            f"bad corners {text!r}: {len(pts)} point(s); give the cloth's four corners, "
            "TL;TR;BR;BL, as 'x,y;x,y;x,y;x,y'"
        )
    return [(p[0], p[1]) for p in pts]


def _dense(polygon: FloatArray, step_mm: float = 10.0) -> FloatArray:
    """The polygon's edges as points ``step_mm`` apart: through a lens, an edge is a curve."""
    out: list[FloatArray] = []
    for a, b in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        n = max(1, int(np.ceil(np.hypot(*(b - a)) / step_mm)))
        out.extend(a + (b - a) * t for t in np.arange(n) / n)
    return np.asarray(out, np.float64)


def draw_zones(image: NDArray[np.uint8], calibration: TableCalibration) -> NDArray[np.uint8]:
    """Draw the layout zones and markers on a copy of ``image`` for a person to check."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    overlay = out.copy()
    palette = [(0, 200, 255), (255, 160, 0), (200, 0, 255), (0, 255, 120), (255, 0, 90)]
    for i, zone in enumerate(calibration.layout.zones):
        pts = calibration.to_image(_dense(np.asarray(zone.polygon, dtype=np.float64)))
        poly = np.round(pts).astype(np.int32).reshape(-1, 1, 2)
        colour = palette[i % len(palette)]
        cv2.fillPoly(overlay, [poly], colour)
        cv2.polylines(out, [poly], True, colour, 2, cv2.LINE_AA)
    out = np.asarray(cv2.addWeighted(overlay, 0.25, out, 0.75, 0), np.uint8)
    for zone in calibration.layout.zones:
        cx, cy = calibration.to_image(np.array([zone.centre], dtype=np.float64))[0]
        _caption(out, zone.name, (int(cx) - 4 * len(zone.name), int(cy) + 5), 0.5)
    for m in calibration.layout.markers:
        mpts = np.round(calibration.to_image(m.corners())).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(out, [mpts], True, (0, 0, 255), 2, cv2.LINE_AA)
    border = np.array(
        [
            [0, 0],
            [calibration.layout.width, 0],
            [calibration.layout.width, calibration.layout.height],
            [0, calibration.layout.height],
        ],
        dtype=np.float64,
    )
    bpts = np.round(calibration.to_image(_dense(border))).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(out, [bpts], True, (255, 255, 255), 1, cv2.LINE_AA)
    label = f"{calibration.method}  residual {calibration.residual_mm:.2f} mm"
    if calibration.lens_k1:
        label += f"  lens k1 {calibration.lens_k1:+.3f}"
    _caption(out, label, (10, 24), 0.6)
    return np.asarray(out, dtype=np.uint8)


def _caption(out: NDArray[np.uint8], text: str, org: tuple[int, int], scale: float) -> None:
    """White text outlined in black, readable on any cloth. The outline is the text drawn
    thin around it: a thicker stroke also spaces the letters wider (OpenCV 5)."""
    x, y = org
    font = cv2.FONT_HERSHEY_SIMPLEX
    for dx, dy in ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)):
        cv2.putText(out, text, (x + dx, y + dy), font, scale, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(out, text, org, font, scale, (255, 255, 255), 1, cv2.LINE_AA)


def load_layout(path: Path | None) -> Layout:
    """Load a layout JSON (the ``layout`` object of a table file, or a bare layout)."""
    if path is None:
        return default_layout()
    data = read_json_file(path, "layout")
    if isinstance(data, dict) and "layout" in data:
        data = data["layout"]
    if not isinstance(data, dict):
        raise VisionError(f"layout {path} is not a JSON object")
    try:
        return Layout.from_dict(data)
    except VisionError as exc:
        raise VisionError(f"{path}: {exc}") from exc
