"""What the camera tests share: a pool to score frames in, and the deck profiles that
several modules learn from the same examples (learned once per test run)."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import multiprocessing
import os
import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from deck_support import faces_or_skip

from calibration.deck_profile import DeckProfile, LearnReport, learn_profile
from hwsim.camera import designs
from hwsim.camera.dataset import SCENE_CACHE_ENV, SUBSET, example_images
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE, CardStyle, Faces


def spawn_pool() -> ProcessPoolExecutor:
    # Spawned, not forked: a fork after OpenCV started its worker threads can deadlock.
    return ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))


def learned_once(
    what: tuple[object, ...], learn: Callable[[], tuple[DeckProfile, LearnReport]]
) -> tuple[DeckProfile, LearnReport]:
    """``learn()``, learned once per test run: pytest-xdist's workers each learned the same
    profiles (2.5 s of CPU each) for the modules they ran. Kept in the run's folder of
    rendered frames (``HWSIM_SCENE_CACHE``, set by tests/conftest.py), keyed by ``what``;
    a worker learning it holds a lock that the others wait on. Without that folder (a
    module run on its own outside this suite's conftest), learned here."""
    folder = os.environ.get(SCENE_CACHE_ENV)
    if not folder:
        return learn()
    key = hashlib.sha256(pickle.dumps(what, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()[:32]
    path = Path(folder) / f"profile-{key}.pickle"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            loaded: tuple[DeckProfile, LearnReport] = pickle.loads(path.read_bytes())
            return loaded
        learned = learn()
        part = path.with_suffix(f".{os.getpid()}.part")
        try:
            part.write_bytes(pickle.dumps(learned, protocol=pickle.HIGHEST_PROTOCOL))
            part.replace(path)
        except OSError:  # a full disk: learned again by the next worker, not a failure
            with contextlib.suppress(OSError):
                part.unlink()
        return learned


@functools.cache
def subset_profile(style: CardStyle) -> tuple[DeckProfile, LearnReport]:
    """Learned from the issue's subset (seed 1) drawn in ``style``, with its report: once
    per run for every module that asks (``profile`` and ``deck_profile`` in
    tests/camera/conftest.py, the accuracy modules)."""
    return learned_once(
        ("subset", style), lambda: learn_profile(example_images(SUBSET, seed=1, style=style))
    )


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
    design's faces replace the renderer's, so the print ``style`` makes no difference.)
    Once per run (``learned_once``)."""

    def learn() -> tuple[DeckProfile, LearnReport]:
        faces = designs.faces(name)
        assert faces, name
        return learn_profile(example_images(designs.examples(name), seed=1, faces=faces))

    return learned_once(("design", name), learn)
