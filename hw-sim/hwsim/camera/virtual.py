"""The virtual overhead camera: a layout whose cards the simulated shoe places and clears.

    cam = VirtualCamera(level="medium", seed=7)
    cam.place("QH", "seat:3")          # lands in the next free slot of seat 3
    cam.place("7S", "dealer", slide_frames=6)   # slides in from the shoe over 6 frames
    frame = cam.read()                 # BGR uint8, cam.size
    cam.clear()                        # round end

Frames are re-rendered only when the layout changes (or a card is sliding); every
``read()`` adds fresh sensor noise. ``calibration()`` returns the exact table calibration of
the camera (what ``studio calibrate table`` would measure from the markers).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from calibration.table import Layout, TableCalibration, default_layout
from hwsim.camera.render import (
    LEVEL_PARAMS,
    TABLE_STYLE,
    CardStyle,
    FloatArray,
    Image,
    PlacedCard,
    add_noise,
    background,
    camera_homography,
    compose,
    degrade,
    random_occluder,
    random_pose,
    slot_centres,
)
from studio.cards import parse_card
from studio.errors import VisionError

SHOE_POSITION_MM = (900.0, 60.0)  # where a sliding card starts (the shoe, dealer's right)


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
        style: CardStyle = TABLE_STYLE,
        occlusion: bool = False,
    ) -> None:
        if level not in LEVEL_PARAMS:
            raise VisionError(f"unknown level {level!r}; levels are easy, medium, hard")
        self.level = level
        self.size = size
        self.layout = layout or default_layout()
        self.barcodes = barcodes
        self.style = style
        self.occlusion = occlusion
        self._rng = np.random.default_rng(seed)
        self.homography: FloatArray = camera_homography(self._rng, level, size, self.layout)
        self._base = background(self.layout, self.homography, size)
        self._cards: list[PlacedCard] = []
        self._slots: dict[str, list[int]] = {}
        self._slides: list[_Slide] = []
        self._frame: Image | None = None
        self._lock = threading.Lock()
        self._light_seed = int(self._rng.integers(0, 2**31))
        self.frames_read = 0

    # ----------------------------------------------------------------- layout

    @property
    def cards(self) -> list[PlacedCard]:
        """Ground truth: the cards on the layout, in placing order."""
        with self._lock:
            return list(self._cards)

    def place(self, code: str, zone: str, *, slide_frames: int = 0) -> PlacedCard:
        """Put a card in the next free slot of ``zone``.

        When every slot of the zone is taken the card overlaps the previous one (offset by
        a corner index), like a fanned hand; overlapped cards are not guaranteed readable.
        """
        card_code = parse_card(code).code
        self.layout.zone(zone)  # raises for an unknown zone
        with self._lock:
            slots = slot_centres(self.layout, zone)
            taken = self._slots.setdefault(zone, [])
            free = [i for i in range(len(slots)) if i not in taken]
            if free:
                taken.append(free[0])
                centre, angle = random_pose(self._rng, slots[free[0]], self.level)
            else:
                last = [c for c in self._cards if c.zone == zone][-1]
                centre, angle = (last.centre[0] + 14.0, last.centre[1] + 20.0), last.angle
            occ = (
                random_occluder(self._rng) if self.occlusion and self._rng.random() < 0.3 else None
            )
            placed = PlacedCard(
                card_code, zone, centre, angle, int(self._rng.integers(0, 999999)), occ
            )
            self._cards.append(placed)
            if slide_frames > 0:
                self._slides.append(_Slide(placed, centre, SHOE_POSITION_MM, slide_frames))
                placed.centre = SHOE_POSITION_MM
            self._frame = None
            return placed

    def remove(self, code: str) -> bool:
        """Take one card (the last placed with that code) off the layout."""
        card_code = parse_card(code).code
        with self._lock:
            for i in range(len(self._cards) - 1, -1, -1):
                c = self._cards[i]
                if c.code == card_code:
                    del self._cards[i]
                    slots = slot_centres(self.layout, c.zone)
                    taken = self._slots.get(c.zone, [])
                    for k in list(taken):
                        if np.hypot(slots[k][0] - c.centre[0], slots[k][1] - c.centre[1]) < 60:
                            taken.remove(k)
                            break
                    self._frame = None
                    return True
            return False

    def clear(self) -> None:
        """Round end: every card leaves the layout."""
        with self._lock:
            self._cards.clear()
            self._slots.clear()
            self._slides.clear()
            self._frame = None

    # ----------------------------------------------------------------- frames

    def read(self) -> Image:
        """The next frame (BGR, ``size``)."""
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
            if self._frame is None or moving:
                composed = compose(
                    self._base,
                    self._cards,
                    self.homography,
                    style=self.style,
                    barcode=self.barcodes,
                )
                # Lighting and blur stay fixed for this camera; only noise changes per frame.
                self._frame = degrade(composed, self.level, np.random.default_rng(self._light_seed))
            frame = self._frame
            self.frames_read += 1
        return add_noise(frame, 2.0)

    def calibration(self) -> TableCalibration:
        """The exact image -> layout calibration of this camera."""
        h = np.asarray(np.linalg.inv(self.homography), dtype=np.float64)
        return TableCalibration(h, self.layout, self.size, "ground-truth")
