"""A studio deck's barcode in a card's body is no pip, and never vetoes the index.

The barcode sits in the body, over the centre pips. Its modules are thin strokes: an
opening that takes a suit symbol's stem off (``index_reader.without_stem``) took most of
the barcode away, and the clump left matched a pip (a 3H's middle read as a club at
0.74), a pip no rank's arrangement has, so a sure index reading was vetoed. On a barcoded
deck whose barcode did not decode, the index then read 50 fewer of 480 hard cards at 720p
than before the stem was matched (barcode+index 0.79 against 0.89).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from hwsim.camera.dataset import scenes, score_scene, true_calibration
from hwsim.camera.render import render_card


@pytest.mark.parametrize("code", ["3H", "9S", "5C", "7D"])
def test_a_barcode_in_the_body_is_no_pip(deck_profile: DeckProfile, code: str) -> None:
    """Rendered at the sizes a card is filmed at (its face 88 to 180 px long, two blurs),
    no part of the barcode is found as a pip."""
    body = deck_profile.body
    assert body is not None
    face = render_card(code, barcode=True, serial=123)
    h, w = face.shape[:2]
    for height in (88, 110, 140, 180):
        small = cv2.resize(face, (round(w * height / h), height), interpolation=cv2.INTER_AREA)
        for sigma in (0.5, 1.0):
            pips, _ = body.find_pips(cv2.GaussianBlur(small, (0, 0), sigma), None)
            inside = [p.centre for p in pips if abs(p.centre[1] - 0.5) < 0.18]
            assert not inside, (height, sigma, inside)


def _number_cards_read(profile: DeckProfile, barcode: bool) -> tuple[set[int], int]:
    """Which number cards (A excluded: the barcode covers its one pip) of the first five
    hard frames (720p, seed 5000) the index method reads, and how many it misreads."""
    read: set[int] = set()
    misread = 0
    for f, scene in enumerate(scenes("hard", 5, seed=5000, barcode=barcode)):
        found = Recogniser(profile, true_calibration(scene)).recognise(scene.frame)
        misread += score_scene(scene, found).misread
        centres = np.array([c.quad.centre for c in found])
        for i, card in enumerate(scene.cards):
            if card.code[0] in "AJQK":
                continue
            k = int(np.argmin(np.linalg.norm(centres - card.image_quad.mean(axis=0), axis=1)))
            if found[k].reading.code == card.code:
                read.add(100 * f + i)
    return read, misread


def test_a_barcoded_number_card_reads_by_its_index_as_a_plain_one(
    deck_profile: DeckProfile,
) -> None:
    """The same frames with and without barcodes (the cards and their places are the
    same): every number card the index reads plain it reads barcoded, none misread."""
    plain, plain_misread = _number_cards_read(deck_profile, barcode=False)
    barcoded, misread = _number_cards_read(deck_profile, barcode=True)
    assert plain_misread == misread == 0
    assert len(plain) >= 40
    assert plain <= barcoded, sorted(plain - barcoded)
