"""Shared fixtures of the camera tests: a deck profile learned from the issue's subset."""

from __future__ import annotations

from pathlib import Path

import pytest

from calibration.deck_profile import DeckProfile, learn_profile
from hwsim.camera.dataset import SUBSET, example_images, write_examples
from hwsim.camera.render import TABLE_STYLE


@pytest.fixture(scope="session")
def profile() -> DeckProfile:
    """Learned from 13 spades + 7H, QD, 3C, drawn in the *profile* style (not the table's)."""
    learned, report = learn_profile(example_images(SUBSET, seed=1))
    assert report.complete, report
    return learned


@pytest.fixture(scope="session")
def deck_profile() -> DeckProfile:
    """Learned from photographs of the deck in use (the frames' print), as a studio calibrates."""
    learned, _ = learn_profile(example_images(SUBSET, seed=1, style=TABLE_STYLE))
    return learned


@pytest.fixture(scope="session")
def examples_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("examples")
    write_examples(d, SUBSET, seed=1)
    return d
