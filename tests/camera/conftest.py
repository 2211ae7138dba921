"""Shared fixtures of the camera tests: a deck profile learned from the issue's subset.

OpenCV runs one thread in the test processes: several pytest workers share the machine's
cores, and ``score_level`` (``hwsim.camera.dataset``) set one thread anyway, for the rest
of the process, once any test had called it; a test now reads frames the same way
whichever ran before it. The product's default is untouched (its subprocesses here too).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import pytest
from accuracy_support import subset_profile

from calibration.deck_profile import DeckProfile
from hwsim.camera.dataset import SUBSET, write_examples
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE

cv2.setNumThreads(1)


@pytest.fixture(scope="session")
def profile() -> DeckProfile:
    """Learned from 13 spades + 7H, QD, 3C, drawn in the *profile* style (not the table's)."""
    learned, report = subset_profile(PROFILE_STYLE)  # example_images(SUBSET, seed=1)
    assert report.complete, report
    return learned


@pytest.fixture(scope="session")
def deck_profile() -> DeckProfile:
    """Learned from photographs of the deck in use (the frames' print), as a studio calibrates."""
    return subset_profile(TABLE_STYLE)[0]  # example_images(SUBSET, seed=1, style=TABLE_STYLE)


@pytest.fixture(scope="session")
def examples_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("examples")
    write_examples(d, SUBSET, seed=1)
    return d
