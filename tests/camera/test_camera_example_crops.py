"""Deck examples that are tight crops or scans of a card's face, and a white desk taken
for the card (``studio calibrate deck``)."""

from __future__ import annotations

import numpy as np
import pytest

import calibration.deck_profile as deck_profile
from calibration.deck_profile import learn_profile, locate_card
from calibration.detect import CardQuad, order_corners
from hwsim.camera.render import PROFILE_STYLE, render_card
from studio.errors import VisionError

# A court card's frame, a glyph's box or a heart pip is found as a quad inside the face.
CODES = ("KS", "QD", "7H", "AS")


def _crop(code: str, margin: int = 0) -> np.ndarray:
    face = render_card(code, PROFILE_STYLE)
    if margin:
        face = np.pad(face, ((margin, margin), (margin, margin), (0, 0)), mode="edge")
    return face


@pytest.mark.parametrize("margin", [0, 4])
@pytest.mark.parametrize("code", CODES)
def test_a_tight_crop_of_a_face_is_the_card(code: str, margin: int) -> None:
    image = _crop(code, margin)
    h, w = image.shape[:2]
    quad = locate_card(image)
    assert quad.area > 0.9 * h * w, (code, quad.corners.tolist())


def test_tight_crops_are_learned_from() -> None:
    _, report = learn_profile([(f"{code}.png", _crop(code)) for code in CODES])
    assert not report.rejected
    assert sorted(report.accepted) == sorted(f"{code}.png" for code in CODES)


def _desk_photo(quads: list[np.ndarray], monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    found = [CardQuad(order_corners(np.asarray(q, np.float64))) for q in quads]
    monkeypatch.setattr(deck_profile, "find_cards", lambda image, **kw: found)
    return np.full((4000, 3000, 3), 230, np.uint8)


def test_a_white_desk_along_the_frame_is_not_taken_for_the_card(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    desk = [[0, 1862], [0, 0], [2995, 0], [2991, 3201]]
    card = [[1000, 1500], [1630, 1500], [1630, 2380], [1000, 2380]]
    image = _desk_photo([desk, card], monkeypatch)
    assert np.allclose(
        locate_card(image).corners, CardQuad(order_corners(np.array(card, float))).corners
    )
    image = _desk_photo([desk], monkeypatch)
    with pytest.raises(VisionError, match="darker, plain background"):
        locate_card(image)


def test_a_card_on_a_desk_is_still_the_largest_quad(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3:4 photograph is no crop: a card covering a small part of it is the card."""
    card = [[1000, 1500], [1630, 1500], [1630, 2380], [1000, 2380]]
    image = _desk_photo([card], monkeypatch)
    assert locate_card(image).area < 0.1 * image.shape[0] * image.shape[1]
