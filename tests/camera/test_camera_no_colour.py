"""A frame with little or no colour (a camera in monochrome or infra-red mode, a greyscale
or desaturated photograph) never gives a confident wrong suit.

Ink only loses colour on camera, and without colour a diamond's ink looks as black as a
spade's. The suit used to be chosen among the suits the ink's colour allowed, so the
diamond's own shape never competed: the standard deck's diamonds read as confident
spades in greyscale photographs (6D as 6S at 0.86 in a reviewer's). Now the colour only
vetoes: the shape is matched against every suit, and where it names a suit the colour
ruled out, or the frame shows no colour at all, the shape alone decides, with a higher
bar (``deck_profile.SHAPE_ONLY_LOG_RATIO``).
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from accuracy_support import design_faces, learned_design

from calibration.colour import has_colour
from calibration.deck_profile import (
    NO_COLOUR_NOTE,
    DeckProfile,
    locate_card,
    quad_width,
)
from calibration.detect import CANON_W, warp_card
from calibration.index_reader import extract_index
from calibration.recogniser import Recogniser
from hwsim.camera.render import Faces, render_example_photo

Image = np.ndarray

RED_CARDS = ["AD", "2D", "6D", "7D", "9D", "TD", "QD", "KD", "3H", "8H", "JH"]


@pytest.fixture(scope="module")
def faces() -> Faces:
    return design_faces("standard", "standard deck")


@pytest.fixture(scope="module")
def standard(faces: Faces) -> DeckProfile:
    return learned_design("standard")[0]  # the subset's examples, seed 1


def saturated(img: Image, share: float) -> Image:
    """``img`` with its colour kept at ``share`` (0: greyscale, still three channels)."""
    grey = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    return np.asarray(cv2.addWeighted(img, share, grey, 1.0 - share, 0), np.uint8)


def test_a_frame_without_colour_is_told_apart() -> None:
    img = render_example_photo("7D", np.random.default_rng(3))
    assert has_colour(img)
    assert has_colour(saturated(img, 0.15))
    assert not has_colour(saturated(img, 0.0))
    assert not has_colour(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))


@pytest.mark.parametrize("share", [0.0, 0.15])
def test_red_cards_without_colour_are_never_read_as_black(
    standard: DeckProfile, faces: Faces, share: float
) -> None:
    """Failed before: every diamond of the standard deck read as a spade, at 0.56-0.65."""
    rng = np.random.default_rng(11)
    rec = Recogniser(standard)
    for code in RED_CARDS:
        found = rec.recognise(saturated(render_example_photo(code, rng, faces=faces), share))
        assert len(found) == 1, code
        assert found[0].reading.code in (None, code), (code, found[0].reading)


def test_black_cards_without_colour_still_read(standard: DeckProfile, faces: Faces) -> None:
    """Shape alone names a suit when it is decisive against all four."""
    rng = np.random.default_rng(12)
    rec = Recogniser(standard)
    read = [
        rec.recognise(saturated(render_example_photo(code, rng, faces=faces), 0.0))[0].reading.code
        for code in ("5S", "JC", "9S", "2C")
    ]
    assert read == ["5S", "JC", "9S", "2C"]


def test_an_unsure_suit_without_colour_says_why(profile: DeckProfile) -> None:
    """A suit the shape alone cannot name in a colourless frame names the likely cause; the
    recogniser gives it as the unreadable card's reason."""
    img = render_example_photo("7H", np.random.default_rng(5))
    quad = locate_card(img)
    card = warp_card(img, quad)
    scale = quad_width(quad) / CANON_W
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    # A blot for a suit pip: every suit's shape fits it about as well.
    blot = np.zeros_like(corners[0].suit.mask)
    h, w = blot.shape[:2]
    cv2.ellipse(blot, (w // 2, h // 2), (w // 3, h // 3), 0, 0, 360, 255, -1)
    blotted = [replace(g, suit=replace(g.suit, mask=blot, bare=None)) for g in corners]
    m = profile.match_corners(blotted, scale, None, colour=False)
    assert m is not None and m.confidence == 0.0
    assert m.suit_note == NO_COLOUR_NOTE
    # With colour the shape (nearest a spade) and the red ink disagree: unreadable, the
    # colour's choice kept as the guess.
    coloured = profile.match_corners(blotted, scale, None)
    assert coloured is not None and coloured.confidence == 0.0
    assert coloured.suit.label in {"H", "D"}
    assert coloured.suit_note == "suit shape (S) and ink colour (red) disagree"
