"""What the camera tests share: a pool to score frames in, and the deck profiles that
several modules learn from the same examples (learned once per process)."""

from __future__ import annotations

import functools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from deck_support import faces_or_skip

from calibration.deck_profile import DeckProfile, LearnReport, learn_profile
from hwsim.camera import designs
from hwsim.camera.dataset import SUBSET, example_images
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE, CardStyle, Faces


def spawn_pool() -> ProcessPoolExecutor:
    # Spawned, not forked: a fork after OpenCV started its worker threads can deadlock.
    return ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))


@functools.cache
def subset_profile(style: CardStyle) -> tuple[DeckProfile, LearnReport]:
    """Learned from the issue's subset (seed 1) drawn in ``style``, with its report: once
    per process for every module that asks (``profile`` and ``deck_profile`` in
    tests/camera/conftest.py, the accuracy modules)."""
    return learn_profile(example_images(SUBSET, seed=1, style=style))


def deck_and_other_profiles() -> dict[str, DeckProfile]:
    """Learned from the issue's subset: ``deck`` from photographs of the print the frames
    show, ``other`` from another print's (a studio that changed decks without learning)."""
    return {"deck": subset_profile(TABLE_STYLE)[0], "other": subset_profile(PROFILE_STYLE)[0]}


def design_faces(name: str, what: str) -> Faces:
    """The faces of design ``name`` (``hwsim.camera.designs``: loaded once per process),
    or the test skipped when they cannot be fetched (see ``tests/deck_support.py``)."""
    faces = faces_or_skip(lambda: designs.faces(name) or {}, what)
    assert faces, name
    return faces


@functools.cache
def learned_design(name: str) -> tuple[DeckProfile, LearnReport]:
    """The profile learned from design ``name``'s examples (seed 1), with its report: the
    same arguments in every module that reads the design, so learned once per process. (A
    design's faces replace the renderer's, so the print ``style`` makes no difference.)"""
    faces = designs.faces(name)
    assert faces, name
    return learn_profile(example_images(designs.examples(name), seed=1, faces=faces))
