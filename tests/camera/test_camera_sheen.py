"""Reading laminated cards under studio lights: a highlight (``hwsim.camera.wear``) eats
the ink under its rim, so a body pip next to clipped paper looks smaller than printed.
Such a pip must not rule its own card's arrangement out (which vetoed a legible index:
unreadable), and no highlight may make a card a confident misread."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.body_pips import LIT_SHRINK, SIZE_RATIO, fit_arrangement, lit_pips
from calibration.deck_profile import DeckProfile
from calibration.detect import warp_card
from calibration.recogniser import Recogniser
from hwsim.camera.dataset import scenes, true_calibration
from hwsim.camera.render import Scene
from hwsim.camera.wear import Wear

THREE = [(0.5, 0.18, 0.116), (0.5, 0.5, 0.116), (0.5, 0.82, 0.116)]  # a 3's pips


def _frame(level: str, index: int) -> Scene:
    """Frame ``index`` of seed 5000 at ``level``, every card under a sheen of 1.0."""
    for i, scene in enumerate(scenes(level, index + 1, seed=5000, wear=Wear(sheen=1.0))):
        if i == index:
            return scene
    raise AssertionError("unreachable")


def test_a_pip_next_to_clipped_paper_may_look_smaller_never_larger() -> None:
    """A 3 whose top pip is seen at 0.61 of its height (its rim in a highlight): the 3's
    arrangement fits only when that pip lies next to clipped paper; a pip seen larger
    than learned never fits, lit or not."""
    plain_card = np.full((336, 240, 3), 235, np.uint8)
    cut = [(0.5, 0.2, 0.071), *THREE[1:]]
    assert 1 / SIZE_RATIO > 0.071 / 0.116
    assert not fit_arrangement(cut, THREE, plain_card).consistent
    lit = [True, False, False]
    assert fit_arrangement(cut, THREE, plain_card, lit=lit) == fit_arrangement(
        THREE, THREE, plain_card
    )
    too_small = [(0.5, 0.2, 0.116 / LIT_SHRINK * 0.9), *THREE[1:]]
    assert not fit_arrangement(too_small, THREE, plain_card, lit=lit).consistent
    grown = [(0.5, 0.18, 0.116 * SIZE_RATIO * 1.1), *THREE[1:]]
    assert not fit_arrangement(grown, THREE, plain_card, lit=[True, True, True]).consistent


@pytest.mark.parametrize(
    ("level", "index", "code"),
    [("easy", 14, "9D"), ("easy", 24, "3C"), ("medium", 0, "2D")],
)
def test_a_card_whose_pips_a_highlight_cut_is_read(
    deck_profile: DeckProfile, level: str, index: int, code: str
) -> None:
    """Generated frames (seed 5000) under a sheen of 1.0: a highlight over the top of the
    card washes part of a body pip out (seen at 0.61 of its height). Both corners read
    the card; before, the body's arrangement ruled the rank out and vetoed it
    (unreadable, confidence 0.00)."""
    scene = _frame(level, index)
    card = next(c for c in scene.cards if c.code == code)
    rec = Recogniser(deck_profile, true_calibration(scene))
    found = min(
        rec.recognise(scene.frame),
        key=lambda f: float(np.linalg.norm(f.quad.centre - card.image_quad.mean(axis=0))),
    )
    assert found.reading.code == code, found.reading
    face = warp_card(scene.frame, found.quad)
    assert deck_profile.body is not None
    pips, _ = deck_profile.body.find_pips(face, None)
    assert any(lit_pips(face, pips)), "the cut pip lies next to clipped paper"


def test_pips_of_a_card_without_highlight_are_not_lit(deck_profile: DeckProfile) -> None:
    """Without a sheen, the easy level's cards show no clipped paper near their pips: the
    fit is the one it always was."""
    scene = next(iter(scenes("easy", 1, seed=5000)))
    rec = Recogniser(deck_profile, true_calibration(scene))
    assert deck_profile.body is not None
    for found in rec.recognise(scene.frame):
        face = warp_card(scene.frame, found.quad)
        pips, _ = deck_profile.body.find_pips(face, None)
        assert not any(lit_pips(face, pips))
