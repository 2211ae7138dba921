"""Cards touching or overlapping that the finder cannot take apart are reported, once,
as unreadable: never dropped without a word. Cards a few mm apart that the shrunk
detection frame joins are looked at again at full resolution.

Two cards touching at a corner (their corners a few mm over each other) and a blackjack
double-down (a card laid sideways across a two-card hand) make blobs that are no card's
shape, that erosion does not split, and that are no cascade. Such blobs vanished: in
phone photographs of real cards both cards of a corner-touching pair, all three of a
doubled hand, were neither read nor reported (the dealer never told a card was there).
"""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np
import pytest
from test_detect_side_by_side import Frame

from calibration.detect import find_cards
from calibration.recogniser import CardFound, Recogniser
from calibration.table import TableCalibration, default_layout
from hwsim.camera.render import (
    FACE_W,
    PX_PER_MM,
    PlacedCard,
    background,
    compose,
    render_card,
)

JOINED_REASON = "cards touching or overlapping: not separated"


def _overhead(size: tuple[int, int]) -> np.ndarray:
    """The whole layout seen from above, filling the frame."""
    layout = default_layout()
    w, h = size
    s = min((w - 20) / layout.width, (h - 16) / layout.height)
    x0, y0 = (w - layout.width * s) / 2, (h - layout.height * s) / 2
    src = np.array(
        [[0, 0], [layout.width, 0], [layout.width, layout.height], [0, layout.height]], np.float32
    )
    dst = np.array(
        [
            [x0, y0],
            [x0 + layout.width * s, y0],
            [x0 + layout.width * s, y0 + layout.height * s],
            [x0, y0 + layout.height * s],
        ],
        np.float32,
    )
    return np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)


def _corner_pair(
    centre: tuple[float, float], angles: tuple[float, float], offset: tuple[float, float]
) -> list[PlacedCard]:
    """Two cards turned by ``angles``, the second ``offset`` mm from the first: a corner
    of each lies a few mm over the other (67 and 85 square mm of overlap below)."""
    x, y = centre
    return [
        PlacedCard("AS", "dealer", (x, y), angles[0]),
        PlacedCard("5S", "dealer", (x + offset[0], y + offset[1]), angles[1]),
    ]


def _doubled_hand(centre: tuple[float, float]) -> list[PlacedCard]:
    """A two-card hand (the second 15 x 20 mm down and right of the first) and the
    double-down card laid sideways across both, a little turned (dealt last: on top)."""
    x, y = centre
    return [
        PlacedCard("6H", "seat:2", (x, y), 0.0),
        PlacedCard("5D", "seat:2", (x + 15.0, y + 20.0), 0.0),
        PlacedCard("TS", "seat:2", (x + 10.0, y + 62.0), 84.0),
    ]


@cache
def scene(what: str) -> Frame:
    """``what``: "corner" (two cards turned apart, corners over each other), "ell" (one
    upright, one sideways, likewise), "double" (a doubled hand), or "empty" (the bare
    layout); 1280 x 720, overhead, a lens's blur."""
    size = (1280, 720)
    homography = _overhead(size)
    layout = default_layout()
    cards = {
        "corner": _corner_pair((300.0, 250.0), (16.4, -18.2), (60.0, 60.0)),
        "ell": _corner_pair((300.0, 250.0), (0.0, 90.0), (70.0, 60.0)),
        "double": _doubled_hand((420.0, 300.0)),
        "empty": [],
    }[what]
    frame = compose(background(layout, homography, size), cards, homography)
    frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 0.8))
    inverse = np.asarray(np.linalg.inv(homography), np.float64)
    return Frame(frame, cards, TableCalibration(inverse, layout, size, "ground-truth"))


def _near(card: PlacedCard, found: list[CardFound]) -> list[CardFound]:
    """The entries within half a card's diagonal of ``card``'s centre."""
    centre = card.image_quad.mean(axis=0)
    diagonal = float(np.hypot(*(card.image_quad[0] - card.image_quad[2])))
    return [f for f in found if math.dist(f.quad.centre, tuple(centre)) < 0.5 * diagonal]


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
@pytest.mark.parametrize("what", ["corner", "ell", "double"])
def test_cards_not_taken_apart_are_reported_unreadable(what: str, calibrated: bool) -> None:
    """Every card placed is read or lies under an unreadable entry; an entry for cards
    not taken apart says so and is never read (it was nothing at all)."""
    f = scene(what)
    found = Recogniser(None, f.calibration if calibrated else None).recognise(f.frame)
    for card in f.cards:
        assert _near(card, found), f"{card.code} vanished: {[e.reading for e in found]}"
    # (Without a table the doubled hand's blob has a card's shape: a quad, read and found
    # unreadable, as any card-shaped quad too large for its index corner to be a card's.)
    if calibrated or what != "double":
        assert any(e.reading.reason == JOINED_REASON for e in found)
    for e in found:
        if e.quad.joined:
            assert e.reading.code is None and e.reading.reason == JOINED_REASON


@pytest.mark.parametrize("what", ["corner", "ell", "double"])
def test_a_blob_of_cards_is_one_entry(what: str) -> None:
    """The blob is one entry for all its cards, with a table calibration (the blob is
    cards' size) and without one: nothing else on the layout (its markers, its lines)
    is taken for such a blob, though no card's size is known to measure them by."""
    f = scene(what)
    for cal in (f.calibration, None):
        found = Recogniser(None, cal).recognise(f.frame)
        assert len(found) == 1, [(e.quad.centre, e.reading.reason) for e in found]
        assert found[0].quad.joined or (cal is None and what == "double")


def test_find_cards_reports_joined_blobs_only_when_asked() -> None:
    """A deck's example photograph (find_cards' default) is never a blob of cards."""
    f = scene("corner")
    assert not any(q.joined for q in find_cards(f.frame))
    assert any(q.joined for q in find_cards(f.frame, joined=True))


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
def test_an_empty_layout_reports_nothing(calibrated: bool) -> None:
    """The layout's printed lines and labels are no blob of cards."""
    f = scene("empty")
    assert Recogniser(None, f.calibration if calibrated else None).recognise(f.frame) == []


def _apart() -> tuple[np.ndarray, list[PlacedCard]]:
    """Six pairs of cards side by side, 3, 5 and 7 mm apart, the second of each turned 0
    or 5 degrees against the first, in a 4000 x 3000 photograph of the whole layout (4 px
    a mm: at the detection scale the gap is a pixel or three)."""
    size = (4000, 3000)
    homography = _overhead(size)
    cards = []
    for k, (gap, turn) in enumerate([(3, 0), (5, 0), (7, 0), (3, 5), (5, 5), (7, 5)]):
        x, y = 200.0 + (k % 3) * 250, 200.0 + (k // 3) * 220
        cards.append(PlacedCard("9H", "dealer", (x, y), 3.0))
        cards.append(PlacedCard("AS", "dealer", (x + 63.0 + gap, y), 3.0 + turn))
    frame = compose(background(default_layout(), homography, size), cards, homography)
    return np.asarray(cv2.GaussianBlur(frame, (0, 0), 1.5)), cards


def _alone(card: PlacedCard, found: list[CardFound]) -> bool:
    """Is ``card`` found by one entry of its own size and place?"""
    true = card.image_quad
    diagonal = float(np.hypot(*(true[0] - true[2])))
    near = [
        e
        for e in found
        if math.dist(e.quad.centre, tuple(true.mean(axis=0))) < 0.12 * diagonal
        and abs(e.quad.diagonal - diagonal) < 0.12 * diagonal
    ]
    return len(near) == 1


def test_cards_a_few_mm_apart_in_a_wide_photograph_are_read_one_by_one() -> None:
    """Without a table calibration, the pairs turned against each other were one
    unreadable "card" each, 5 and 7 mm apart (the shrunk mask's closing seals a gap of
    2-3 px, and their seam is aslant): each card is found, by a quad of its own."""
    frame, cards = _apart()
    found = Recogniser(None, None).recognise(frame)
    assert [c.code for c in cards if not _alone(c, found)] == []
    assert len(found) == len(cards)


def _marked(code: str) -> np.ndarray:
    """``code``'s face with a black marker line, 2 mm wide, edge to edge across it."""
    img = render_card(code).copy()
    y = round(44 * PX_PER_MM)
    cv2.line(img, (0, y), (FACE_W - 1, y), (0, 0, 0), round(2 * PX_PER_MM))
    return img


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
def test_a_marker_line_across_a_card_is_no_gap_between_cards(calibrated: bool) -> None:
    """At full resolution a marker line cuts a card's paper into two halves of a card's
    proportions; the line shows ink, not the cloth between two cards: one card each."""
    size = (4000, 3000)
    homography = _overhead(size)
    layout = default_layout()
    codes = ("KS", "QD", "8C", "3S")
    cards = [PlacedCard(c, "dealer", (260.0 + i * 140, 250.0), 0.0) for i, c in enumerate(codes)]
    frame = compose(
        background(layout, homography, size),
        cards,
        homography,
        faces={c: _marked(c) for c in codes},
    )
    frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 1.5))
    calibration = TableCalibration(
        np.asarray(np.linalg.inv(homography), np.float64), layout, size, "ground-truth"
    )
    found = Recogniser(None, calibration if calibrated else None).recognise(frame)
    assert len(found) == len(cards)
    assert all(_alone(c, found) for c in cards)
