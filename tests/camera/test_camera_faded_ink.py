"""Faded ink keeps its colour: a red card whose ink lost most of its contrast (a worn or
thinly printed deck, ``hwsim.camera.worn_face``) still looks red, a black one black.

Its redness is measured per unit of the ink's darkness (``index_reader.ink_redness``):
ink mixed with paper loses both alike. Measured as ``R - max(G, B)`` alone, red ink
faded by 70 % fitted every suit's colour, and the card's confidence was halved.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.deck_profile import DeckProfile
from calibration.detect import CANON_H, CANON_W
from calibration.index_reader import extract_index
from hwsim.camera.render import TABLE_STYLE, card_mask, render_card
from hwsim.camera.worn_face import fade_ink


@pytest.fixture(scope="module")
def profile(deck_profile: DeckProfile) -> DeckProfile:
    """learn_profile(example_images(SUBSET, seed=1, style=TABLE_STYLE)): the session's."""
    return deck_profile


@pytest.mark.parametrize(
    ("code", "colour"),
    [("5H", {"H", "D"}), ("3D", {"H", "D"}), ("5S", {"S", "C"}), ("8C", {"S", "C"})],
)
@pytest.mark.parametrize("share", [0.0, 0.4, 0.7])
def test_faded_ink_keeps_its_suit_colour(
    profile: DeckProfile, code: str, colour: set[str], share: float
) -> None:
    face = render_card(code, TABLE_STYLE).astype(np.float32)
    fade_ink(face, card_mask(), share)
    card = cv2.resize(
        np.clip(face, 0, 255).astype(np.uint8), (CANON_W, CANON_H), interpolation=cv2.INTER_AREA
    )
    glyphs = extract_index(card)
    assert glyphs is not None
    assert profile.compatible_suits(glyphs.redness) <= colour, glyphs.redness
