"""Black ink never reads as a confident red suit in a frame with colour.

A black spade whose stem blurred away is an upside-down heart to the pip matcher (body
pips are matched either way round): in a reviewer's overhead phone photographs (cards
~250 px wide, blur 2 px) 4 of 52 spades read as confident hearts (5S as 5H at 0.57, TS as
TH at 0.85, up to 1.00 on other sets). The ink was measured black and ruled the hearts
out, but a suit shape the colour ruled out overruled the colour when decisive alone — an
allowance meant for red ink washed towards grey (a desaturated photograph), which black
ink never is. Now the shape overrules the colour only where the ink can be that suit's
washed out (``DeckProfile.shape_may_overrule``); and where the shape alone decides, the
corners' pips and the body's must not name different suits.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.body_pips import body_blobs
from calibration.deck_profile import NO_COLOUR_NOTE, DeckProfile, locate_card, quad_width
from calibration.detect import CANON_W, warp_card
from calibration.index_reader import extract_index
from calibration.recogniser import Recogniser
from hwsim.camera.render import render_example_photo
from studio.cards import RED_SUITS

Image = np.ndarray


def black_ink(img: Image) -> Image:
    """``img`` with its red ink printed black (as dark as it was): a heart- or
    diamond-shaped black pip, what a spade or club blurred out of shape shows the
    matcher. The table keeps its colour, so the frame has colour."""
    b, g, r = (img[..., i].astype(np.int16) for i in range(3))
    red = r - np.maximum(g, b) > 30
    out = img.copy()
    ink = np.minimum(g, b).astype(np.uint8)
    out[red] = np.stack([ink, ink, ink], axis=-1)[red]
    return out


def saturated(img: Image, share: float) -> Image:
    grey = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    return np.asarray(cv2.addWeighted(img, share, grey, 1.0 - share, 0), np.uint8)


def test_a_red_suit_shape_in_black_ink_is_unreadable(profile: DeckProfile) -> None:
    """Failed before: each read as its red card at 1.00."""
    rng = np.random.default_rng(7)
    rec = Recogniser(profile)
    for code in ("5H", "9H", "6D"):
        found = rec.recognise(black_ink(render_example_photo(code, rng)))
        assert len(found) == 1, code
        reading = found[0].reading
        assert reading.code is None, (code, reading)
        assert f"suit shape ({code[1]}) and ink colour (black) disagree" in reading.reason


@pytest.mark.parametrize("share", [0.05, 0.15])
def test_red_ink_washed_towards_grey_still_reads(profile: DeckProfile, share: float) -> None:
    """What the shape overruling the colour is for: a desaturated photograph's red ink
    looks too grey for a red suit (+0.05 at 5 % saturation), and its shape names it."""
    rng = np.random.default_rng(11)
    rec = Recogniser(profile)
    for code in ("9H", "6D"):
        found = rec.recognise(saturated(render_example_photo(code, rng), share))
        assert [f.reading.code for f in found] == [code]


def test_the_shape_overrules_only_ink_that_lost_colour(profile: DeckProfile) -> None:
    black = max(v for k, v in profile.suit_redness.items() if k not in RED_SUITS)
    assert not profile.shape_may_overrule("H", black)  # black ink: never a heart
    assert not profile.shape_may_overrule("D", black + 0.02)
    assert profile.shape_may_overrule("H", 0.05)  # red ink at 5 % saturation
    assert profile.shape_may_overrule("D", 0.3)
    assert not profile.shape_may_overrule("S", 0.6)  # ink never gains colour
    assert not profile.shape_may_overrule("C", 0.1)


def _card(code: str) -> tuple[Image, float]:
    img = render_example_photo(code, np.random.default_rng(3))
    quad = locate_card(img)
    return warp_card(img, quad), quad_width(quad) / CANON_W


@pytest.mark.parametrize(("index", "pips"), [("9S", "9H"), ("5H", "5S"), ("7S", "7D")])
def test_corners_and_body_naming_other_suits_by_shape_alone_are_unsure(
    profile: DeckProfile, index: str, pips: str
) -> None:
    """Without colour the shape alone decides, and the corners' pips and the body's are two
    witnesses: one naming another suit surely, the suit is not read. A reviewer's greyscale
    TS (corners spade 0.94, body pips heart 0.99, their stems blurred away) read as TH at
    0.80. Failed before: 0.28-0.44, the body's suit."""
    card, scale = _card(index)
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    body = profile.read_body(*_card(pips))
    m = profile.match_corners(corners, scale, body, colour=False)
    assert m is not None
    assert m.confidence == 0.0, m
    assert m.suit_note == NO_COLOUR_NOTE


@pytest.mark.parametrize("code", ["9H", "TH"])
def test_a_number_cards_pips_are_matched_the_way_they_are_printed(
    profile: DeckProfile, code: str
) -> None:
    """A heart turned from the way it is printed (what a spade whose stem blurred away
    looks like) is no heart: body pips off the middle line are matched in their printed
    orientation. Failed before: matched either way round, every turned pip read H 0.99."""
    card, scale = _card(code)
    h, w = card.shape[:2]
    turned = card.copy()
    assert profile.body is not None
    for blob in body_blobs(card, profile.body.index_box):
        x0, y0, x1, y1 = blob.glyph.bbox
        xs = slice(int(x0 * w) - 2, int(np.ceil(x1 * w)) + 2)
        ys = slice(int(y0 * h) - 2, int(np.ceil(y1 * h)) + 2)
        turned[ys, xs] = card[ys, xs][::-1, ::-1]
    printed = profile.read_body(card, scale)
    assert printed is not None
    assert all(max(s, key=lambda k: s[k]) == "H" for s in printed.suit_scores)
    reading = profile.read_body(turned, scale)
    assert reading is not None and code[0] in reading.exact
    for pip, scores in zip(reading.pips, reading.suit_scores, strict=True):
        if abs(pip.centre[1] - 0.5) > 0.04:  # off the middle line (body_pips.MIDDLE_LINE)
            assert max(scores, key=lambda k: scores[k]) != "H", (pip.centre, scores)
