"""Generated data sets for the camera: deck-profile examples and scored test frames.

Scoring a recogniser against rendered ground truth: every true card is matched to the
detected card whose centre is nearest (within a third of the card's diagonal). A true card
is then exactly one of ``correct`` (readable, right code), ``unreadable`` (found, published as
unreadable), ``misread`` (readable, wrong code: a *confident* misread, since readable means
above the threshold) or ``missed`` (not found). Detected cards with no true card are
``extra``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.barcode import BarcodeReader
from calibration.deck_profile import DeckProfile
from calibration.recogniser import CardFound, Recogniser
from calibration.table import Layout, TableCalibration, default_layout
from hwsim.camera.render import (
    FELT,
    PROFILE_STYLE,
    TABLE_STYLE,
    CardStyle,
    Faces,
    Scene,
    barrel,
    barrel_points,
    render_example_photo,
    render_scene,
    shadow_band,
)
from hwsim.camera.wear import Wear
from studio.cards import RANKS, SUITS, full_deck

# The subset the issue asks a profile to learn from: one suit's 13 ranks + one card of
# each other suit.
SUBSET: tuple[str, ...] = (*tuple(r + "S" for r in RANKS), "7H", "QD", "3C")


def write_examples(
    directory: Path,
    codes: tuple[str, ...] | list[str] = SUBSET,
    *,
    seed: int = 0,
    style: CardStyle = PROFILE_STYLE,
) -> list[Path]:
    """Write one "photograph" per code, named ``<code>.png``."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for code in codes:
        p = directory / f"{code}.png"
        cv2.imwrite(str(p), render_example_photo(code, rng, style=style))
        paths.append(p)
    return paths


def example_images(
    codes: tuple[str, ...] | list[str] = SUBSET,
    *,
    seed: int = 0,
    style: CardStyle = PROFILE_STYLE,
    faces: Faces | None = None,
    surface: tuple[int, int, int] = FELT,
) -> list[tuple[str, NDArray[np.uint8]]]:
    """In-memory example photographs, as ``(file name, image)``.

    ``style`` is the print of the deck photographed: :data:`PROFILE_STYLE` (another print
    than the table frames', a stress test) or :data:`TABLE_STYLE` (the deck in use, as a
    studio calibrates: still other photographs than any frame). ``faces``: another deck's
    faces instead (see :mod:`hwsim.camera.standard_deck`). ``surface``: what the cards lie
    on (the table's felt by default; a white desk is as light as the paper).
    """
    rng = np.random.default_rng(seed)
    return [
        (f"{c}.png", render_example_photo(c, rng, style=style, faces=faces, surface=surface))
        for c in codes
    ]


def scenes(
    level: str,
    n_frames: int,
    *,
    cards_per_frame: int = 12,
    seed: int = 0,
    barcode: bool = False,
    style: CardStyle = TABLE_STYLE,
    size: tuple[int, int] = (1280, 720),
    layout: Layout | None = None,
    cascade: int = 0,
    faces: Faces | None = None,
    wear: Wear | None = None,
) -> Iterator[Scene]:
    """``n_frames`` random frames; cards are drawn without replacement within a frame.

    ``cascade`` > 1: hands of that many overlapping cards (see ``render_scene``).
    ``wear``: real cards' curl and sheen (``hwsim.camera.wear``), from a stream of their
    own (seed + 2): the scenes are the same cards in the same places.
    """
    rng = np.random.default_rng(seed)
    wear_rng = np.random.default_rng(seed + 2) if wear else None
    deck = [c.code for c in full_deck()]
    cache = _scene_cache(
        level, cards_per_frame, seed, barcode, style, size, layout, cascade, faces, wear
    )
    for n in range(n_frames):
        if cache is not None:
            cached = cache.load(n)
            if cached is not None:
                scene, state, wear_state = cached
                rng.bit_generator.state = state
                if wear_rng is not None and wear_state is not None:
                    wear_rng.bit_generator.state = wear_state
                yield scene
                continue
        codes = [deck[int(i)] for i in rng.choice(len(deck), cards_per_frame, replace=False)]
        scene = render_scene(
            rng,
            level,
            codes,
            size=size,
            layout=layout,
            barcode=barcode,
            style=style,
            cascade=cascade,
            faces=faces,
            wear=wear,
            wear_rng=wear_rng,
        )
        if cache is not None:
            cache.store(n, scene, rng, wear_rng)
        yield scene


# A folder for rendered frames, shared by the processes of one test run (tests/conftest.py
# sets it; nothing else does): the camera tests render the same frames many times over (a
# profile's and another's scores of one cell, frame 33 of a seed after its 33 first).
SCENE_CACHE_ENV = "HWSIM_SCENE_CACHE"
_FACES_DIGESTS: dict[int, tuple[Faces, str]] = {}


def _faces_digest(faces: Faces) -> str:
    # Once per faces object: a deck's faces are tens of megabytes, loaded once per process.
    known = _FACES_DIGESTS.get(id(faces))
    if known is not None and known[0] is faces:
        return known[1]
    h = hashlib.sha256()
    for code in sorted(faces):
        image = np.ascontiguousarray(faces[code])
        h.update(f"{code}{image.shape}{image.dtype}".encode())
        h.update(image.data)
    _FACES_DIGESTS[id(faces)] = (faces, h.hexdigest())
    return h.hexdigest()


@dataclass(frozen=True)
class _SceneCache:
    """Frame ``n`` of one ``scenes`` stream, with both generators' states after it, so that
    a stream can go on rendering from any frame it has cached (the states are all that a
    frame leaves behind: rendering is otherwise deterministic)."""

    folder: Path
    key: str

    def _path(self, n: int) -> Path:
        return self.folder / f"{self.key}-{n}.pickle"

    def load(self, n: int) -> tuple[Scene, dict[str, Any], dict[str, Any] | None] | None:
        try:
            data = self._path(n).read_bytes()
        except OSError:  # not there (or the folder gone): rendered
            return None
        loaded: tuple[Scene, dict[str, Any], dict[str, Any] | None] = pickle.loads(data)
        return loaded

    def store(
        self, n: int, scene: Scene, rng: np.random.Generator, wear: np.random.Generator | None
    ) -> None:
        data = pickle.dumps(
            (scene, rng.bit_generator.state, wear.bit_generator.state if wear else None),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        # Written aside and renamed: a process reading it sees all of it or nothing. Only a
        # saving: a disk that is full (it holds up to ~2 GB while the camera tests run)
        # leaves the frame rendered again next time, not a test failed.
        part = self.folder / f"{self.key}-{n}.{os.getpid()}.part"
        try:
            part.write_bytes(data)
            part.replace(self._path(n))
        except OSError:
            with contextlib.suppress(OSError):
                part.unlink()


def _scene_cache(
    level: str,
    cards_per_frame: int,
    seed: int,
    barcode: bool,
    style: CardStyle,
    size: tuple[int, int],
    layout: Layout | None,
    cascade: int,
    faces: Faces | None,
    wear: Wear | None,
) -> _SceneCache | None:
    folder = os.environ.get(SCENE_CACHE_ENV)
    if not folder:
        return None
    what = (level, cards_per_frame, seed, barcode, style, size, layout, cascade, wear)
    h = hashlib.sha256(pickle.dumps(what, protocol=pickle.HIGHEST_PROTOCOL))
    h.update(_faces_digest(faces).encode() if faces is not None else b"-")
    return _SceneCache(Path(folder), h.hexdigest()[:32])


def true_calibration(
    scene: Scene, layout: Layout | None = None, lens_k1: float = 0.0
) -> TableCalibration:
    """The exact table calibration of a rendered scene (image -> layout), filmed through a
    lens of radial distortion ``lens_k1`` (``render.barrel``)."""
    lay = layout or default_layout()
    h = np.asarray(np.linalg.inv(scene.homography), dtype=np.float64)
    size = (int(scene.frame.shape[1]), int(scene.frame.shape[0]))
    return TableCalibration(h, lay, size, "ground-truth", lens_k1=lens_k1)


@dataclass(slots=True)
class Score:
    total: int = 0
    correct: int = 0
    unreadable: int = 0
    misread: int = 0
    missed: int = 0
    extra: int = 0
    zone_checked: int = 0
    zone_correct: int = 0
    misreads: list[tuple[str, str, float]] = field(default_factory=list)  # truth, read, confidence
    methods: dict[str, int] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def add(self, other: Score) -> None:
        for name in (
            "total",
            "correct",
            "unreadable",
            "misread",
            "missed",
            "extra",
            "zone_checked",
            "zone_correct",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misreads.extend(other.misreads)
        for k, v in other.methods.items():
            self.methods[k] = self.methods.get(k, 0) + v

    def summary(self) -> dict[str, float | int]:
        return {
            "cards": self.total,
            "correct": self.correct,
            "accuracy": round(self.accuracy, 4),
            "unreadable": self.unreadable,
            "confident_misreads": self.misread,
            "missed": self.missed,
            "extra": self.extra,
            "zone_accuracy": round(self.zone_correct / self.zone_checked, 4)
            if self.zone_checked
            else 0.0,
        }


# The columns of a Score.summary() in the benchmarks' text tables.
SCORE_HEADER = f"{'cards':>6}{'accuracy':>10}{'unread':>8}{'misread':>9}{'missed':>8}"


def score_columns(row: dict[str, Any]) -> str:
    """One row's :data:`SCORE_HEADER` columns (``row`` holds a ``Score.summary()``)."""
    return (
        f"{row['cards']:>6}{row['accuracy']:>10.4f}{row['unreadable']:>8}"
        f"{row['confident_misreads']:>9}{row['missed']:>8}"
    )


def score_scene(scene: Scene, found: list[CardFound]) -> Score:
    """Score recogniser output (``calibration.recogniser.CardFound`` objects) on a scene."""
    s = Score()
    centres = np.array([f.quad.centre for f in found]) if found else np.zeros((0, 2))
    # Nearest pairs first, each detection to one card: with overlapping cards, a card the
    # detector missed must not take its neighbour's detection.
    pairs = sorted(
        (float(np.linalg.norm(c - card.image_quad.mean(axis=0))), i, k)
        for i, card in enumerate(scene.cards)
        for k, c in enumerate(centres)
    )
    match: dict[int, int] = {}
    used: set[int] = set()
    for dist, i, k in pairs:
        quad = scene.cards[i].image_quad
        if i in match or k in used or dist > float(np.linalg.norm(quad[0] - quad[2])) / 3:
            continue
        match[i] = k
        used.add(k)
    for i, card in enumerate(scene.cards):
        s.total += 1
        if i not in match:
            s.missed += 1
            continue
        f = found[match[i]]
        reading = f.reading
        zone = f.zone
        if zone is not None:
            s.zone_checked += 1
            s.zone_correct += int(zone == card.zone)
        if reading.code is None:
            s.unreadable += 1
        elif reading.code == card.code:
            s.correct += 1
            s.methods[reading.method] = s.methods.get(reading.method, 0) + 1
        else:
            s.misread += 1
            s.misreads.append((card.code, reading.code, reading.confidence))
    s.extra = len(found) - len(used)
    return s


def all_codes() -> list[str]:
    return [r + s for s in SUITS for r in RANKS]


def score_level(
    profile: DeckProfile | None,
    level: str,
    frames: int,
    *,
    seed: int,
    barcode: bool = False,
    size: tuple[int, int] = (1280, 720),
    cascade: int = 0,
    faces: Faces | None = None,
    shadow: float = 0.0,
    shadow_edge: float = 15.0,
    lens: float = 0.0,
    lens_model: bool = True,
    wear: Wear | None = None,
) -> Score:
    """Recognise ``frames`` generated frames of a level and score them.

    ``profile`` is a :class:`calibration.deck_profile.DeckProfile` or ``None`` (barcode only).
    ``shadow`` > 0: each frame gets a band of shadow that deep, its edge blurred by
    ``shadow_edge`` pixels (see ``shadow_band``).
    ``lens`` != 0: each frame is seen through a lens of that radial distortion (see
    ``render.barrel``); the table calibration knows the lens, or with ``lens_model=False``
    stays the undistorted one, as one fitted without a lens model is.
    ``wear``: the cards curled and sheened (``hwsim.camera.wear``).
    A module-level function, so that it can run in a spawned worker process.
    """
    cv2.setNumThreads(1)
    reader = BarcodeReader() if barcode else None
    shade = np.random.default_rng(seed + 1)  # its own stream: the scenes stay the same
    total = Score()
    for scene in scenes(
        level,
        frames,
        seed=seed,
        barcode=barcode,
        size=size,
        cascade=cascade,
        faces=faces,
        wear=wear,
    ):
        frame = shadow_band(scene.frame, shade, shadow, shadow_edge) if shadow > 0 else scene.frame
        if lens:
            h, w = frame.shape[:2]
            frame = barrel(frame, lens)
            for card in scene.cards:
                card.image_quad = barrel_points(card.image_quad, lens, (w, h))
        cal = true_calibration(scene, lens_k1=lens if lens_model else 0.0)
        rec = Recogniser(profile, cal, barcodes=reader)
        total.add(score_scene(scene, rec.recognise(frame)))
    return total
