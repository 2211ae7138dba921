"""Rows of three and four cards side by side or end to end (a blackjack hand laid out),
touching or a few millimetres apart, and pairs shifted along their seam: each card is
found on its own, with a table calibration and without one.

The shrunk detection frame (640 px) closes gaps of a few millimetres: a row is one blob
(3 side by side: 189 x 88 mm, 4 end to end: 63 x 352 mm), no card's shape; a pair shifted
along its seam is a step-shaped blob. They were split at one seam at most (a pair's), or
by erosion where the gap was wide enough. At 720p (``python test_detect_rows.py``: four
frames each, 0-4 mm apart), before and after, with a table calibration / without one:
rows of three 20 / 20 -> 48 / 45 of 48 cards, rows of four 30 / 0 (side by side) or 30
(end to end) -> 64 and 60 / 60 of 64, rows of five 32-33 -> 75-80 of 80, pairs shifted
5-30 mm 42 / 30 (side by side) or 42 (end to end) -> 47-48 of 48. The cards not found
are touching in a row square to the pixels (the renderer draws no line between them),
and one card on a layout line.
"""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np
import pytest
from test_detect_side_by_side import GAPS, Frame, _close, _overhead, found_alone

from calibration.detect import _offset_seam, _row_counts
from calibration.recogniser import Recogniser
from calibration.table import TableCalibration, default_layout
from hwsim.camera.render import CARD_H_MM, CARD_W_MM, PlacedCard, background, compose

_CODES = ("2S", "7H", "QD", "3C", "KS", "AD", "9C", "5H", "JH", "4D", "TS", "8C", "6S", "KH")
_ANGLES = (0.0, 8.0, -17.0, 31.0)


def row(
    n: int,
    arrangement: str,
    gap: float,
    centre: tuple[float, float],
    angle: float,
    offset: float = 0.0,
    first: int = 0,
) -> list[PlacedCard]:
    """``n`` cards in a row, side by side or end to end, ``gap`` mm apart, each shifted
    ``offset`` mm along the seam from the last; each card's serial is its gap x 10."""
    a = math.radians(angle)
    across = np.array([math.cos(a), math.sin(a)])  # along a card's short side
    along = np.array([-math.sin(a), math.cos(a)])  # along its long side
    if arrangement == "side":
        step = (CARD_W_MM + gap) * across + offset * along
    else:
        step = (CARD_H_MM + gap) * along + offset * across
    cards = []
    for i in range(n):
        c = np.array(centre) + (i - (n - 1) / 2) * step
        code = _CODES[(first + i) % len(_CODES)]
        centre_i = (float(c[0]), float(c[1]))
        cards.append(PlacedCard(code, "dealer", centre_i, angle, serial=round(gap * 10)))
    return cards


def _frame(cards: list[PlacedCard], seed: int, camera: str = "720p") -> Frame:
    """The cards on the default layout, seen from above at 720p, or by a phone held
    close (4000 x 3000), as ``test_detect_side_by_side``'s scenes: a lens's blur, a
    sensor's noise."""
    size = (1280, 720) if camera == "720p" else (4000, 3000)
    homography = _overhead(size) if camera == "720p" else _close(size)
    layout = default_layout()
    frame = compose(background(layout, homography, size), cards, homography)
    frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 0.6 if camera == "720p" else 1.5))
    noise = np.empty(frame.shape, np.int16)
    cv2.setRNGSeed(seed)
    cv2.randn(noise, 0, 3)
    frame = np.asarray(np.clip(frame.astype(np.int16) + noise, 0, 255), np.uint8)
    inverse = np.asarray(np.linalg.inv(homography), np.float64)
    return Frame(frame, cards, TableCalibration(inverse, layout, size, "ground-truth"))


@cache
def rows(n: int, arrangement: str, turn: int) -> Frame:
    """Four rows of ``n`` cards, turned 0, 8, -17 and 31 degrees, 0, 1, 2 and 4 mm apart
    (the gaps turned by ``turn`` places round the rows)."""
    if arrangement == "side":
        centres = [(250.0, 150.0), (700.0, 150.0), (250.0, 400.0), (700.0, 400.0)]
    else:
        centres = [(216.0, 275.0), (400.0, 275.0), (600.0, 275.0), (840.0, 275.0)]
    cards = []
    for k, (centre, angle) in enumerate(zip(centres, _ANGLES, strict=True)):
        cards += row(n, arrangement, GAPS[(k + turn) % len(GAPS)], centre, angle, first=4 * k)
    return _frame(cards, turn)


OFFSETS: tuple[float, ...] = (5.0, 10.0, 15.0, 20.0, 25.0, 30.0)


@cache
def shifted(arrangement: str, turn: int) -> Frame:
    """Six pairs, side by side or end to end, shifted 5 to 30 mm along their seam (the
    other way round on odd turns), the gaps and angles turned by ``turn`` places."""
    centres = [(250.0, 150.0), (560.0, 150.0), (850.0, 150.0)]
    centres += [(250.0, 410.0), (560.0, 410.0), (850.0, 410.0)]
    sign = 1 if turn % 2 == 0 else -1
    cards = []
    for k, centre in enumerate(centres):
        gap = GAPS[(k + turn) % len(GAPS)]
        angle = _ANGLES[(k + turn) % len(_ANGLES)]
        cards += row(2, arrangement, gap, centre, angle, sign * OFFSETS[k], first=2 * k)
    return _frame(cards, turn)


@cache
def close_up() -> Frame:
    """A phone's photograph (4000 x 3000, about 6 px a millimetre) of rows of three and
    four side by side, three end to end and a pair shifted 15 mm, all 1 mm apart."""
    cards = row(3, "side", 1.0, (330.0, 220.0), 8.0)
    cards += row(4, "side", 1.0, (600.0, 230.0), -17.0, first=3)
    cards += row(3, "end", 1.0, (300.0, 430.0), 85.0, first=7)
    cards += row(2, "side", 1.0, (620.0, 440.0), 20.0, 15.0, first=10)
    return _frame(cards, 1, "phone")


def found(f: Frame, calibrated: bool) -> dict[float, tuple[int, int]]:
    """By gap: cards found, each by one quad of its own size and place, and placed."""
    quads = Recogniser(None, f.calibration if calibrated else None).find(f.frame)
    hits: dict[float, tuple[int, int]] = {}
    for card in f.cards:
        got, placed = hits.get(card.serial / 10, (0, 0))
        hits[card.serial / 10] = (got + found_alone(card, quads), placed + 1)
    return hits


ROWS = [
    (n, arrangement, turn) for n in (3, 4) for arrangement in ("side", "end") for turn in (0, 2)
]


if __name__ == "__main__":
    for n in (3, 4, 5):
        for arrangement in ("side", "end"):
            for calibrated in (True, False):
                got = placed = 0
                for turn in range(4):
                    for g, p in found(rows(n, arrangement, turn), calibrated).values():
                        got, placed = got + g, placed + p
                table = "table   " if calibrated else "no table"
                print(f"row of {n} {arrangement:5} {table} {got}/{placed}")
    for arrangement in ("side", "end"):
        for calibrated in (True, False):
            got = placed = 0
            for turn in range(4):
                for g, p in found(shifted(arrangement, turn), calibrated).values():
                    got, placed = got + g, placed + p
            table = "table   " if calibrated else "no table"
            print(f"shifted pair {arrangement:5} {table} {got}/{placed}")
    for calibrated in (True, False):
        print(f"close-up {'table' if calibrated else 'no table'} {found(close_up(), calibrated)}")


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
@pytest.mark.parametrize(("n", "arrangement", "turn"), ROWS)
def test_cards_in_a_row_are_found_one_by_one(
    n: int, arrangement: str, turn: int, calibrated: bool
) -> None:
    """Every card of rows 1, 2 and 4 mm apart is found by a quad of its own (the rows of
    three were split at one seam at most: 2 of 3 cards at best; the rows of four side by
    side without a table were two pairs' quads)."""
    hits = found(rows(n, arrangement, turn), calibrated)
    hits.pop(0.0)
    assert all(got == placed for got, placed in hits.values()), hits


def test_touching_cards_in_a_row_are_mostly_found() -> None:
    """Rows touching: only the seams tell the cards, a line of a pixel or two at 720p.
    Where a row lies square to the pixels (turned 0 degrees), the renderer leaves no line
    between touching cards, and the row stays unsplit (one unreadable quad or none)."""
    table = untabled = placed = 0
    for n, arrangement, turn in ROWS:
        f = rows(n, arrangement, turn)
        table += found(f, True)[0.0][0]
        got, placed_here = found(f, False)[0.0]
        untabled += got
        placed += placed_here
    assert placed == 28
    assert table >= 21  # before: none
    assert untabled >= 14


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
@pytest.mark.parametrize("arrangement", ["side", "end"])
@pytest.mark.parametrize("turn", [0, 1])
def test_pairs_shifted_along_their_seam_are_found_one_by_one(
    arrangement: str, turn: int, calibrated: bool
) -> None:
    """Pairs 0-4 mm apart shifted 5-30 mm along their seam (a step-shaped blob): each card
    is found (before: 10 or 11 of 12 a frame, 8 side by side without a table)."""
    hits = found(shifted(arrangement, turn), calibrated)
    assert all(got == placed for got, placed in hits.values()), hits


@pytest.mark.parametrize("calibrated", [True, False], ids=["table", "no-table"])
def test_cards_in_a_row_in_a_close_photograph_are_found_one_by_one(calibrated: bool) -> None:
    """At 6 px a millimetre the shrunk frame still joins cards 1 mm apart: every card is
    found (before: 6 of 12 with a table, none without)."""
    assert found(close_up(), calibrated) == {1.0: (12, 12)}


def _glared(f: Frame, share: float) -> Frame:
    """``f`` (rows of three) with a glare spot, as white as paper, over the middle of each
    row's first seam, ``share`` of its length long."""
    frame = f.frame.astype(np.float32)
    for first in range(0, len(f.cards), 3):
        a, b = f.cards[first].image_quad, f.cards[first + 1].image_quad
        top, bottom = (a[1] + b[0]) / 2, (a[2] + b[3]) / 2
        centre, length = (top + bottom) / 2, float(np.hypot(*(bottom - top)))
        angle = math.degrees(math.atan2(bottom[1] - top[1], bottom[0] - top[0]))
        spot = np.zeros(frame.shape[:2], np.float32)
        axes = (round(share * length / 2), round(0.12 * length))
        cv2.ellipse(spot, (round(centre[0]), round(centre[1])), axes, angle, 0, 360, 1.0, -1)
        spot = np.asarray(cv2.GaussianBlur(spot, (0, 0), 2), np.float32)[..., None]
        frame = frame * (1 - spot) + 252 * spot
    return Frame(np.clip(frame, 0, 255).astype(np.uint8), f.cards, f.calibration)


@pytest.mark.parametrize(("share", "calibrated"), [(0.35, True), (0.35, False), (0.5, True)])
def test_a_seam_partly_washed_out_by_glare_still_splits_a_row(
    share: float, calibrated: bool
) -> None:
    """Glare over the middle of a seam: the line need dip along 60 % of it without a table
    calibration, 40 % with one (and in each end band). Rows of three 1-4 mm apart, one
    seam each a third washed out, or half with a table, are still split (a row with a
    seam washed out further is not split at all)."""
    hits = found(_glared(rows(3, "side", 1), share), calibrated)
    hits.pop(0.0)
    assert all(got == placed for got, placed in hits.values()), hits


def test_row_counts_follow_from_the_proportions() -> None:
    """n cards side by side are n x 63 by 88 mm, end to end 63 by n x 88: the counts a
    rectangle may hold. Four side by side and two end to end have nearly the same
    proportions (0.35 and 0.36): both are tried, four first."""
    assert _row_counts(88, 2 * 63) == [2]
    assert _row_counts(88, 3 * 63) == [3]
    assert _row_counts(88, 4 * 63) == [4, 2]
    assert _row_counts(63, 2 * 88) == [4, 2]
    assert _row_counts(63, 3 * 88) == [3]
    assert _row_counts(63, 5 * 88) == [5]
    assert _row_counts(88, 5 * 63) == [5]
    # A card-shaped quad may be two cards side by side (its seam tells); a square is no row.
    assert _row_counts(63, 88) == [2]
    assert _row_counts(88, 88) == []


def _step(seam: bool, at: float = 0.5) -> np.ndarray:
    """A rectified least rectangle 120 x 100 px of a step-shaped blob: one card's paper
    left of ``at`` in rows 0-79, another's right of it in rows 20-99, on cloth; with a
    dark line between them (a seam), or none (one card lying on the other)."""
    white = np.full((100, 120), 40.0, np.float32)
    x = round(at * 120)
    white[0:80, :x] = 200.0
    white[20:100, x:] = 200.0
    if seam:
        white[20:80, x - 1 : x + 1] = 90.0
    return white


def test_a_step_is_split_only_at_a_seam_near_its_middle() -> None:
    """A pair shifted along its seam: a line near the middle dipping in whiteness over the
    rows both cards lie in, paper on one side only beyond them, at either end on opposite
    sides. The same step without a dip (a cascade's top card, its edge on the lower card)
    or away from the middle (a card shifted over most of another) is no pair."""
    seam = _offset_seam(_step(True), 120.0)
    assert seam is not None
    cover, ends, x, y0, y1 = seam
    assert cover == ends == 1.0 and abs(x - 60) <= 2 and (y0, y1) == (20, 79)
    none = _offset_seam(_step(False), 120.0)
    assert none is None or none[0] == 0.0
    assert _offset_seam(_step(True, at=0.3), 120.0) is None
