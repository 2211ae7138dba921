"""The virtual overhead camera: a layout whose cards the simulated shoe places and clears.

    cam = VirtualCamera(level="medium", seed=7)
    cam.place("QH", "seat:3")          # lands in the next free slot of seat 3
    cam.place("7S", "dealer", slide_frames=6)   # slides in from the shoe over 6 frames
    frame = cam.read()                 # BGR uint8, cam.size
    cam.clear()                        # round end

A big table uses the wide layout and its tighter slot grid, so that every hand has room
for its cards side by side (a card alone is read more surely than one split out of a
cascade):

    cam = VirtualCamera(layout=wide_layout(7), slots=TIGHT_SLOTS, size=(1600, 900))

When every slot of a zone is taken, the next card is fanned over the zone's last card
(14 mm right, 20 mm down, kept inside the zone), as a dealer does with a long hand.

Frames are re-rendered only when the layout changes (or a card is sliding): lighting,
glare and blur stay those of the camera. Every ``read()`` is a new exposure: fresh sensor
noise and its own compression, at the level's strength, as a real camera's frames are. ``calibration()`` returns the exact table calibration of
the camera (what ``studio calibrate table`` would measure from the markers).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace

import numpy as np

from calibration.table import (
    WIDE_MAX_TURN,
    WIDE_SLOT,
    Layout,
    TableCalibration,
    default_layout,
    wide_layout,
)
from hwsim.camera.render import (
    CARD_H_MM,
    CARD_W_MM,
    LEVEL_PARAMS,
    TABLE_STYLE,
    CardStyle,
    Faces,
    FloatArray,
    Image,
    Noise,
    PlacedCard,
    background,
    camera_homography,
    compose,
    noise_field,
    optics,
    random_occluder,
    random_pose,
    sensor,
    slot_centres,
)
from studio.cards import parse_card
from studio.errors import VisionError

SHOE_POSITION_MM = (900.0, 60.0)  # where a sliding card starts (the shoe, dealer's right)
FAN_OFFSET_MM = (14.0, 20.0)  # a card placed in a full zone, relative to the zone's last card


@dataclass(frozen=True, slots=True)
class SlotGrid:
    """Card slots for cards that lie nearly square to the cloth.

    The slots of a zone are a grid of ``pitch`` (x, y) millimetres centred in the zone's
    bounding box, row by row from the top, each row from the left. A card is turned by at
    most ``max_turn`` degrees (less if the camera's level turns cards less; turned by 180
    degrees as well when the level does that) and moved at most ``jitter`` mm from the
    slot's centre. The default renderer's slots (``hwsim.camera.render.slot_centres``)
    instead fit a card turned any way, which takes 118 mm both ways.
    """

    pitch: tuple[float, float]
    max_turn: float
    jitter: float = 2.0

    def centres(self, layout: Layout, zone: str) -> list[tuple[float, float]]:
        pts = np.asarray(layout.zone(zone).polygon, dtype=np.float64)
        (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
        px, py = self.pitch
        nx, ny = max(1, int((x1 - x0) // px)), max(1, int((y1 - y0) // py))
        mx, my = (x1 - x0 - nx * px) / 2, (y1 - y0 - ny * py) / 2
        return [
            (float(x0 + mx + (i + 0.5) * px), float(y0 + my + (j + 0.5) * py))
            for j in range(ny)
            for i in range(nx)
        ]

    def pose(
        self, rng: np.random.Generator, slot: tuple[float, float], level: str
    ) -> tuple[tuple[float, float], float]:
        p = LEVEL_PARAMS[level]
        turn = min(p.rotation_deg, self.max_turn)
        angle = float(rng.uniform(-turn, turn))
        if p.flip_180 and rng.random() < 0.5:
            angle += 180.0
        j = self.jitter
        return (slot[0] + float(rng.uniform(-j, j)), slot[1] + float(rng.uniform(-j, j))), angle

    def gap_mm(self) -> tuple[float, float]:
        """The least space between the cards of neighbouring slots (x, y)."""
        a = math.radians(self.max_turn)
        bw = CARD_W_MM * math.cos(a) + CARD_H_MM * math.sin(a)
        bh = CARD_W_MM * math.sin(a) + CARD_H_MM * math.cos(a)
        return self.pitch[0] - bw - 2 * self.jitter, self.pitch[1] - bh - 2 * self.jitter


# Slots 90 x 110 mm for cards turned at most 5 degrees: what calibration.table.wide_layout()
# is built for (7 seats: 2 x 3 per main hand); on default_layout(3) they give 3 x 2.
TIGHT_SLOTS = SlotGrid(WIDE_SLOT, WIDE_MAX_TURN)

STANDARD_LAYOUT_MAX_SEATS = 3  # beyond this the standard layout leaves a hand one column
SMALL_FRAME = (1280, 720)
WIDE_FRAME = (1600, 900)


def camera_setup(seats: int) -> tuple[Layout, SlotGrid, tuple[int, int]]:
    """The layout, slot grid and frame size of a table camera for ``seats`` seats.

    Up to 3 seats the standard layout at 1280x720 (a card about 81 px wide); a bigger
    table the wide layout at 1600x900 (about 74 px; at 720p it would be 61 px and more
    cards would go unread). Cards lie in :data:`TIGHT_SLOTS`, side by side.
    """
    if seats <= STANDARD_LAYOUT_MAX_SEATS:
        return default_layout(seats), TIGHT_SLOTS, SMALL_FRAME
    return wide_layout(seats), TIGHT_SLOTS, WIDE_FRAME


@dataclass(slots=True)
class _Slide:
    card: PlacedCard
    target: tuple[float, float]
    start: tuple[float, float]
    frames: int
    done: int = 0


class VirtualCamera:
    """A simulated camera over a layout, driven by ``place`` / ``remove`` / ``clear``."""

    def __init__(
        self,
        *,
        level: str = "easy",
        size: tuple[int, int] = (1280, 720),
        seed: int = 0,
        barcodes: bool = False,
        layout: Layout | None = None,
        slots: SlotGrid | None = None,
        style: CardStyle = TABLE_STYLE,
        occlusion: bool = False,
        camera: FloatArray | None = None,
        faces: Faces | None = None,
        noise_bank: int = 0,
    ) -> None:
        """``camera``: layout mm -> image px (e.g. :func:`hwsim.camera.render.standing_camera`);
        by default a random overhead camera of the level. ``faces``: another deck's faces
        (see :mod:`hwsim.camera.standard_deck`) instead of the drawn ones.

        ``noise_bank``: 0 draws each frame's sensor noise afresh (independent exposures, as
        the live benchmark needs); N > 0 draws N noise fields once and gives each frame one
        of them. Drawing the noise is most of a frame's cost (30 ms at 1600x900 here):
        the demo, rendering a whole studio's cameras on one machine, takes a bank."""
        if level not in LEVEL_PARAMS:
            raise VisionError(f"unknown level {level!r}; levels are easy, medium, hard")
        if noise_bank < 0:
            raise VisionError(f"noise_bank is a number of noise fields (0: none), not {noise_bank}")
        self.level = level
        self.size = size
        self.layout = layout or default_layout()
        self.slots = slots
        self.barcodes = barcodes
        self.style = style
        self.occlusion = occlusion
        self.faces = faces
        self._rng = np.random.default_rng(seed)
        self.homography: FloatArray = (
            camera_homography(self._rng, level, size, self.layout) if camera is None else camera
        )
        self._base = background(self.layout, self.homography, size)
        self._cards: list[PlacedCard] = []
        self._slots: dict[str, list[int]] = {}  # zone -> taken slot indices
        self._slot_of: dict[int, tuple[str, int]] = {}  # id(card) -> its slot (fanned: none)
        self._slides: list[_Slide] = []
        self._frame: Image | None = None
        self._lock = threading.Lock()
        self._version = 0  # counts layout changes: a frame drawn meanwhile is not kept
        self._noise_lock = threading.Lock()
        self._light_seed = int(self._rng.integers(0, 2**31))
        # Its own stream: the poses drawn from ``_rng`` stay those of the seed.
        self._exposures = np.random.default_rng([seed, 1])
        self.noise_bank = noise_bank
        self._noise: list[Noise] = []
        self._noise_rng = np.random.default_rng([seed, 2])
        self.frames_read = 0

    # ----------------------------------------------------------------- layout

    @property
    def cards(self) -> list[PlacedCard]:
        """Ground truth: the cards on the layout, in placing order."""
        with self._lock:
            return list(self._cards)

    def place(
        self, code: str, zone: str, *, slide_frames: int = 0, face_down: bool = False
    ) -> PlacedCard:
        """Put a card in the next free slot of ``zone`` (``face_down``: its back up).

        When every slot of the zone is taken the card is fanned over the zone's last card
        (:data:`FAN_OFFSET_MM`, kept inside the zone), like a long hand. Kept inside the zone
        it can end up beside the last card rather than below it, a row the recogniser does
        not split: a fanned card is not guaranteed to be seen.
        """
        card_code = parse_card(code).code
        box = self.layout.zone(zone)  # raises for an unknown zone
        with self._lock:
            slots = self._slot_centres(zone)
            taken = self._slots.setdefault(zone, [])
            free = [i for i in range(len(slots)) if i not in taken]
            slot: int | None = None
            if free:
                slot = free[0]
                taken.append(slot)
                centre, angle = self._pose(slots[slot])
            else:
                last = [c for c in self._cards if c.zone == zone][-1]
                centre = _inside(
                    box.polygon,
                    (last.centre[0] + FAN_OFFSET_MM[0], last.centre[1] + FAN_OFFSET_MM[1]),
                )
                angle = last.angle
            occ = (
                random_occluder(self._rng) if self.occlusion and self._rng.random() < 0.3 else None
            )
            placed = PlacedCard(
                card_code,
                zone,
                centre,
                angle,
                int(self._rng.integers(0, 999999)),
                occ,
                face_down=face_down,
            )
            self._cards.append(placed)
            if slot is not None:
                self._slot_of[id(placed)] = (zone, slot)
            if slide_frames > 0:
                self._slides.append(_Slide(placed, centre, SHOE_POSITION_MM, slide_frames))
                placed.centre = SHOE_POSITION_MM
            self._changed()
            return placed

    def _slot_centres(self, zone: str) -> list[tuple[float, float]]:
        if self.slots is not None:
            return self.slots.centres(self.layout, zone)
        return slot_centres(self.layout, zone)

    def _pose(self, slot: tuple[float, float]) -> tuple[tuple[float, float], float]:
        if self.slots is not None:
            return self.slots.pose(self._rng, slot, self.level)
        return random_pose(self._rng, slot, self.level)

    def remove(self, code: str) -> bool:
        """Take one card (the last placed with that code) off the layout."""
        card_code = parse_card(code).code
        with self._lock:
            for i in range(len(self._cards) - 1, -1, -1):
                c = self._cards[i]
                if c.code == card_code:
                    del self._cards[i]
                    where = self._slot_of.pop(id(c), None)
                    if where is not None:
                        self._slots[where[0]].remove(where[1])
                    self._changed()
                    return True
            return False

    def turn_over(self) -> list[PlacedCard]:
        """Turn every face-down card face up (the dealer shows the hole card)."""
        with self._lock:
            turned = [c for c in self._cards if c.face_down]
            for card in turned:
                card.face_down = False
            if turned:
                self._changed()
            return turned

    def clear(self) -> None:
        """Round end: every card leaves the layout."""
        with self._lock:
            self._cards.clear()
            self._slots.clear()
            self._slot_of.clear()
            self._slides.clear()
            self._changed()

    # ----------------------------------------------------------------- frames

    def read(self) -> Image:
        """The next frame (BGR, ``size``).

        The layout is rendered from a copy taken under the lock, not under it: a caller
        placing a card (the simulator's event loop) waited for a frame being drawn (77-257 ms).
        """
        with self._lock:
            moving = bool(self._slides)
            for s in self._slides:
                s.done += 1
                t = min(1.0, s.done / s.frames)
                s.card.centre = (
                    s.start[0] + (s.target[0] - s.start[0]) * t,
                    s.start[1] + (s.target[1] - s.start[1]) * t,
                )
            self._slides = [s for s in self._slides if s.done < s.frames]
            frame = None if moving else self._frame
            cards = list(self._cards)
            drawn = [replace(card) for card in cards] if frame is None else []
            version = self._version
            self.frames_read += 1
            seed = int(self._exposures.integers(0, 2**31))
        if frame is None:
            composed = compose(
                self._base,
                drawn,
                self.homography,
                style=self.style,
                barcode=self.barcodes,
                faces=self.faces,
            )
            # Lighting and blur stay fixed for this camera; noise and compression change
            # with every frame.
            frame = optics(composed, self.level, np.random.default_rng(self._light_seed))
            with self._lock:
                for card, copy in zip(cards, drawn, strict=True):
                    card.image_quad = copy.image_quad  # where it was drawn: ground truth
                if self._version == version and not moving:
                    self._frame = frame
        noise = self._banked_noise(seed) if self.noise_bank else None
        return sensor(frame, self.level, np.random.default_rng(seed), noise)

    def _changed(self) -> None:
        """The layout changed (call under the lock): the next frame is drawn afresh."""
        self._frame = None
        self._version += 1

    def _banked_noise(self, seed: int) -> Noise | None:
        """One of the bank's noise fields (drawn on first use), chosen by the frame's seed."""
        sigma = LEVEL_PARAMS[self.level].noise_sigma
        if sigma <= 0:
            return None
        with self._noise_lock:  # not the layout's lock: drawing the bank takes 100-250 ms
            if not self._noise:
                shape = (self.size[1], self.size[0], 3)
                seeds = self._noise_rng.integers(0, 2**31, self.noise_bank)
                self._noise = [noise_field(shape, sigma, int(s)) for s in seeds]
        return self._noise[seed % len(self._noise)]

    def calibration(self) -> TableCalibration:
        """The exact image -> layout calibration of this camera."""
        h = np.asarray(np.linalg.inv(self.homography), dtype=np.float64)
        return TableCalibration(h, self.layout, self.size, "ground-truth")


def _inside(
    polygon: tuple[tuple[float, float], ...], point: tuple[float, float]
) -> tuple[float, float]:
    """``point`` moved into the zone's bounding box, half a card clear of its edges."""
    pts = np.asarray(polygon, dtype=np.float64)
    (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
    hw, hh = min(CARD_W_MM / 2, (x1 - x0) / 2), min(CARD_H_MM / 2, (y1 - y0) / 2)
    return (
        float(min(max(point[0], x0 + hw), x1 - hw)),
        float(min(max(point[1], y0 + hh), y1 - hh)),
    )
