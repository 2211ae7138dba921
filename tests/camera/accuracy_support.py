"""What the camera accuracy tests share: two deck profiles and a pool to score frames in."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from calibration.deck_profile import DeckProfile, learn_profile
from hwsim.camera.dataset import SUBSET, example_images
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE


def spawn_pool() -> ProcessPoolExecutor:
    # Spawned, not forked: a fork after OpenCV started its worker threads can deadlock.
    return ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))


def deck_and_other_profiles() -> dict[str, DeckProfile]:
    """Learned from the issue's subset: ``deck`` from photographs of the print the frames
    show, ``other`` from another print's (a studio that changed decks without learning)."""
    return {
        "deck": learn_profile(example_images(SUBSET, seed=1, style=TABLE_STYLE))[0],
        "other": learn_profile(example_images(SUBSET, seed=1, style=PROFILE_STYLE))[0],
    }
