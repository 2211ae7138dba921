"""A single card with a dark line edge to edge across its middle (a pen line, a crease, a
pen's shadow) is one card, with a table calibration and without one.

Its two halves (63 x 44 mm: 0.70) have a card's proportions, and the line dips in
whiteness as two cards' seam does: without a table calibration to say the halves are no
card's size, each such card was split in two unreadable "cards" (15 "cards" found for 8,
14 of them unreadable, with a 55 grey levels faint crease), and a deck's creased example
photograph was rejected ("no corner index found"). Two cards' seam shows the cloth at
its ends (their rounded corners) or along it; a line on a card does not.
"""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np
import pytest
from test_detect_side_by_side import _overhead, scene

from calibration.deck_profile import learn_profile, locate_card
from calibration.detect import find_cards
from calibration.recogniser import Recogniser
from calibration.table import TableCalibration, default_layout
from hwsim.camera.render import (
    FACE_W,
    PX_PER_MM,
    PlacedCard,
    background,
    compose,
    render_card,
    render_example_photo,
)

_CODES = ("KS", "QD", "JH", "8C", "10D", "3S", "AH", "5C")
_LINES = [("pen", 40), ("crease", 200), ("shadow", 150)]


def _lined(code: str, kind: str, dark: int) -> np.ndarray:
    """``code``'s face with a line across its middle, edge to edge: a pen line (0.5 mm,
    grey level ``dark``), a crease (a soft grey line, ``dark`` at its darkest: 200 is 55
    levels below paper) or a pen's shadow (3 mm, paper times ``dark`` / 255)."""
    img = render_card(code).copy()
    y = round(44 * PX_PER_MM)
    if kind == "pen":
        cv2.line(img, (0, y), (FACE_W - 1, y), (dark,) * 3, max(1, round(0.5 * PX_PER_MM)))
    elif kind == "crease":
        band = img[y - 4 : y + 4].astype(np.float32)
        profile = (1 - np.abs(np.arange(-4, 4) + 0.5) / 4.5)[:, None, None]
        img[y - 4 : y + 4] = np.clip(band - profile * (255 - dark), 0, 255).astype(np.uint8)
    else:
        w = round(1.5 * PX_PER_MM)
        img[y - w : y + w] = (img[y - w : y + w].astype(np.float32) * (dark / 255)).astype(np.uint8)
    return img


@cache
def _table(kind: str, dark: int, angle: float) -> tuple[np.ndarray, list[PlacedCard]]:
    """Eight single cards, each with the line across it, on the table at 720p."""
    size = (1280, 720)
    homography = _overhead(size)
    layout = default_layout()
    centres = [(150 + (i % 4) * 180, 150 + (i // 4) * 230) for i in range(len(_CODES))]
    cards = [PlacedCard(c, "dealer", xy, angle) for c, xy in zip(_CODES, centres, strict=True)]
    faces = {c: _lined(c, kind, dark) for c in _CODES}
    frame = compose(background(layout, homography, size), cards, homography, faces=faces)
    frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 0.6))
    noise = np.empty(frame.shape, np.int16)
    cv2.setRNGSeed(0)
    cv2.randn(noise, 0, 3)
    return np.asarray(np.clip(frame.astype(np.int16) + noise, 0, 255), np.uint8), cards


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
@pytest.mark.parametrize(("kind", "dark", "angle"), [(*k, a) for k in _LINES for a in (0, 20)])
def test_a_line_across_a_single_card_does_not_split_it(
    kind: str, dark: int, angle: float, calibrated: bool
) -> None:
    """Each card is found by one quad of its own size (it was two half-cards each, but
    the ace's, without a table calibration, whatever the line)."""
    frame, cards = _table(kind, dark, angle)
    homography = _overhead((1280, 720))
    calibration = TableCalibration(
        np.asarray(np.linalg.inv(homography), np.float64),
        default_layout(),
        (1280, 720),
        "ground-truth",
    )
    quads = Recogniser(None, calibration if calibrated else None).find(frame)
    assert len(quads) == len(cards)
    for card in cards:
        true = card.image_quad
        diagonal = float(np.hypot(*(true[0] - true[2])))
        near = [
            q
            for q in quads
            if math.dist(q.centre, tuple(true.mean(axis=0))) < 0.12 * diagonal
            and abs(q.diagonal - diagonal) < 0.12 * diagonal
        ]
        assert len(near) == 1, card.code


def test_a_creased_example_photograph_is_one_card() -> None:
    """The card of a learning photograph with a crease across it is found whole (it was
    the larger half), and the example is learned from."""
    for seed, code in enumerate(("KS", "7H")):
        plain = render_example_photo(code, np.random.default_rng(seed), faces=None)
        creased = render_example_photo(
            code, np.random.default_rng(seed), faces={code: _lined(code, "crease", 200)}
        )
        whole, found = locate_card(plain), locate_card(creased)
        assert np.abs(found.corners - whole.corners).max() < 0.03 * whole.diagonal
    rng = np.random.default_rng(1)
    examples = [
        (f"{c}.png", render_example_photo(c, rng, faces=faces))
        for c, faces in (
            ("KS", {"KS": _lined("KS", "crease", 200)}),
            ("7H", {"7H": _lined("7H", "crease", 200)}),
            ("2S", None),
            ("QD", None),
        )
    ]
    _, report = learn_profile(examples)
    assert report.rejected == {}


def test_a_photograph_of_one_card_is_not_split_at_seams() -> None:
    """``rows=False`` (an example photograph): cards side by side stay one quad a pair."""
    frame = scene("side", "720p", 1).frame
    assert len(find_cards(frame)) == 8
    assert len(find_cards(frame, rows=False)) == 4
