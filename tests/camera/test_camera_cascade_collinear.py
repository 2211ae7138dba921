"""Two cascaded cards whose sides nearly continue each other: the hand's outline then has a
side made of both cards' sides, a few pixels apart, which is no one card's side."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from calibration.cascade import split_cascade


def _turned(cx: float, cy: float, degrees: float) -> np.ndarray:
    """A 240 x 336 px card (63 x 88 mm at 1440p over a table) centred at (cx, cy)."""
    a = np.radians(degrees)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    c = np.array([cx, cy])
    return np.array(
        [c - 120 * u - 168 * v, c + 120 * u - 168 * v, c + 120 * u + 168 * v, c - 120 * u + 168 * v]
    )


@pytest.mark.parametrize(
    ("lower", "upper", "dx", "dy"),
    [
        (14.77, 16.98, 76.4, 37.0),
        (5.88, 7.74, 74.3, 24.8),
        (-5.26, -7.98, 83.5, 10.5),
        (-16.41, -11.76, 75.1, -44.8),
        (10.12, 9.01, 78.7, -0.9),
    ],
)
def test_a_hand_whose_cards_sides_nearly_continue_each_other_is_split(
    lower: float, upper: float, dx: float, dy: float
) -> None:
    """The upper card is shifted along one side and 8-22 px across it. The polygon merges
    the two cards' sides there into one; fitting one line to its pixels followed one card's
    side and moved the corners at its ends, so that the corner looked whole at a wrong size
    and the hand was not split (before; the polygon's own side had split it within 9 px).
    """
    cards = [_turned(400, 380, lower), _turned(400 + dx, 380 + dy, upper)]
    mask = np.zeros((1100, 1100), np.uint8)
    for card in cards:  # anti-aliased, at 1/16 px
        cv2.fillConvexPoly(mask, np.round(card * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    contours, _ = cv2.findContours(
        (mask > 127).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE
    )
    quads = split_cascade(np.asarray(max(contours, key=cv2.contourArea), np.int32))
    assert len(quads) == 2
    margin = 0.02 * float(np.hypot(240, 336)) + 3.0
    for card in cards:
        quad = min(quads, key=lambda q: float(np.linalg.norm(q.mean(axis=0) - card.mean(axis=0))))
        error = min(
            float(np.linalg.norm(np.roll(quad, k, axis=0) - card, axis=1).max()) for k in range(4)
        )
        assert error <= margin, (error, margin)
