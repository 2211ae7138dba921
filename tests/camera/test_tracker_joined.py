"""The live path and cards it cannot take apart: a double-down card laid sideways across a
hand, a card dealt touching another at a corner.

Before, the tracker never asked for such blobs: the cards it had published there went
out of sight and were reported ``removed`` while they still lay there, and the card that
joined them was never published (to the controller: a card the camera did not see). Now
the blob holds the cards it hides, and is one unreadable placement when it holds a card
not published yet.
"""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np
import pytest
from test_detect_joined import JOINED_REASON, _overhead

from calibration.deck_profile import DeckProfile
from calibration.detect import CardQuad
from calibration.recogniser import Reading, Recogniser
from calibration.table import TableCalibration, default_layout
from calibration.tracker import CardEvent, CardTracker
from drivers.camera.service import _card_record, _placement
from hwsim.camera.render import PlacedCard, background, compose

SIZE = (1280, 720)
X, Y = 420.0, 300.0  # the hand's first card, mm on the layout
HAND = (PlacedCard("6H", "seat:2", (X, Y), 0.0), PlacedCard("5D", "seat:2", (X + 15, Y + 20), 0.0))
DOUBLE = PlacedCard("TS", "seat:2", (X + 10, Y + 62), 84.0)  # sideways across the hand
ACE = PlacedCard("AS", "dealer", (300.0, 250.0), 16.4)
FIVE = PlacedCard("5S", "dealer", (360.0, 310.0), -18.2)  # a corner over the ace's


def _at(card: PlacedCard, x: float, y: float) -> PlacedCard:
    return PlacedCard(card.code, card.zone, (x, y), card.angle)


@cache
def _calibration() -> TableCalibration:
    return TableCalibration(
        np.asarray(np.linalg.inv(_overhead(SIZE)), np.float64), default_layout(), SIZE, "truth"
    )


Hand = tuple[float, float, float, float]  # a dealer's hand: an ellipse (cx, cy, ax, ay), mm
_FRAMES: dict[object, np.ndarray] = {}


def _frame(cards: tuple[PlacedCard, ...], hand: Hand | None = None) -> np.ndarray:
    """The cards on the layout seen from above (``hand`` over them), a lens's blur and
    sensor noise."""
    key = (tuple((c.code, c.centre, c.angle) for c in cards), hand)
    if key not in _FRAMES:
        homography = _overhead(SIZE)
        frame = compose(_background(), list(cards), homography)
        if hand is not None:
            cx, cy, ax, ay = hand
            t = np.linspace(0, 2 * np.pi, 40)
            ring = np.stack([cx + ax * np.cos(t), cy + ay * np.sin(t)], 1).reshape(-1, 1, 2)
            outline = cv2.perspectiveTransform(ring, homography).reshape(-1, 1, 2)
            cv2.fillPoly(frame, [np.round(outline).astype(np.int32)], (120, 150, 205), cv2.LINE_AA)
        frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), 0.8))
        noise = np.random.default_rng(len(cards)).normal(0, 2, frame.shape)
        _FRAMES[key] = np.clip(frame + noise, 0, 255).astype(np.uint8)
    return _FRAMES[key]


@cache
def _background() -> np.ndarray:
    return background(default_layout(), _overhead(SIZE), SIZE)


def _slide(
    still: tuple[PlacedCard, ...], card: PlacedCard, start: tuple[float, float], steps: int = 6
) -> list[tuple[PlacedCard, ...]]:
    """Frames of ``card`` slid from ``start`` to where it lies, beside ``still``."""
    (x0, y0), (x1, y1) = start, card.centre
    return [
        (*still, _at(card, x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps))
        for k in range(steps + 1)
    ]


def _events(
    tracker: CardTracker, frames: list[tuple[PlacedCard, ...]], hand: Hand | None = None
) -> list[CardEvent]:
    events: list[CardEvent] = []
    for cards in frames:
        events += tracker.update(_frame(cards, hand))
    return events


def _run(
    tracker: CardTracker, frames: list[tuple[PlacedCard, ...]], hand: Hand | None = None
) -> list[tuple[str, str | None, str | None]]:
    return [
        (e.event, e.reading.code, e.reading.reason if e.quad.joined else None)
        for e in _events(tracker, frames, hand)
    ]


def _tracker(profile: DeckProfile) -> CardTracker:
    return CardTracker(Recogniser(profile, _calibration()), settle_frames=4, remove_frames=6)


BLOB = (None, JOINED_REASON)


def test_a_double_down_across_a_hand_is_one_unreadable_placement(profile: DeckProfile) -> None:
    tracker = _tracker(profile)
    assert _run(tracker, [HAND[:1]] * 6 + [HAND] * 6) == [
        ("placed", "6H", None),
        ("placed", "5D", None),
    ]
    doubled = (*HAND, DOUBLE)
    events = _run(tracker, _slide(HAND, DOUBLE, (X + 200, Y + 62)) + [doubled] * 20)
    # The hand's cards still lie there: not removed. The double is one unreadable card.
    assert events == [("placed", *BLOB)]
    blobs = [r for _, r in tracker.on_table if r.reason == JOINED_REASON]
    assert [(r.code, r.confidence) for r in blobs] == [(None, 0.0)]
    cleared = _run(tracker, [()] * 8)
    assert sorted(cleared, key=str) == sorted(
        [("removed", "6H", None), ("removed", "5D", None), ("removed", *BLOB)], key=str
    )
    assert _run(tracker, [()] * 8) == []


def test_a_card_dealt_touching_another_at_a_corner_is_one_unreadable_placement(
    profile: DeckProfile,
) -> None:
    tracker = _tracker(profile)
    assert _run(tracker, [(ACE,)] * 6) == [("placed", "AS", None)]
    events = _run(tracker, _slide((ACE,), FIVE, (460.0, 360.0)) + [(ACE, FIVE)] * 20)
    assert events == [("placed", *BLOB)]


def test_cards_pushed_together_are_no_new_card(profile: DeckProfile) -> None:
    """Two published cards pushed until they touch: the blob's paper is theirs."""
    tracker = _tracker(profile)
    apart = _at(FIVE, 380.0, 330.0)
    assert sorted(_run(tracker, [(ACE, apart)] * 6)) == [
        ("placed", "5S", None),
        ("placed", "AS", None),
    ]
    assert _run(tracker, _slide((ACE,), FIVE, apart.centre, steps=10) + [(ACE, FIVE)] * 20) == []


def test_a_card_slid_out_of_the_blob_is_the_blob_moved(profile: DeckProfile) -> None:
    """Taken out of the blob, the double is read: the blob's ``removed`` comes first, as
    for any card slid away (the controller follows a card lifted and laid again)."""
    tracker = _tracker(profile)
    doubled = (*HAND, DOUBLE)
    _run(tracker, [HAND[:1]] * 6 + [HAND] * 6 + _slide(HAND, DOUBLE, (X + 200, Y + 62)))
    assert _run(tracker, [doubled] * 12) == [("placed", *BLOB)]
    out = _at(DOUBLE, X + 10, Y + 140)
    moved = _run(tracker, _slide(HAND, out, DOUBLE.centre) + [(*HAND, out)] * 12)
    assert moved == [("removed", *BLOB), ("placed", "TS", None)]


def test_the_card_a_blob_stood_for_is_not_published_again(profile: DeckProfile) -> None:
    """The hand is collected and the double stays where it lay: the card found there is
    the blob's placement (unreadable), not a second card."""
    tracker = _tracker(profile)
    doubled = (*HAND, DOUBLE)
    _run(tracker, [HAND[:1]] * 6 + [HAND] * 6 + _slide(HAND, DOUBLE, (X + 200, Y + 62)))
    assert _run(tracker, [doubled] * 12) == [("placed", *BLOB)]
    [blob] = [i for i, r in tracker.on_table if r.reason == JOINED_REASON]
    events = _run(tracker, [(DOUBLE,)] * 20)
    assert sorted(events, key=str) == [("removed", "5D", None), ("removed", "6H", None)]
    # The card took over the blob's placement (its id: the camera's state file keys by it).
    [(placement, left)] = tracker.on_table
    assert placement == blob and left.code is None and left.reason == JOINED_REASON
    gone = _events(tracker, [()] * 8)
    assert [(e.event, e.track, e.reading.code) for e in gone] == [("removed", blob, None)]
    assert tracker.on_table == []


def test_a_blob_published_before_a_restart_is_laid_down_as_one(profile: DeckProfile) -> None:
    """The camera service saves a blob's placement as joined, and a restart lays it down
    again as a blob: the cards found there are not published again."""
    first = _tracker(profile)
    doubled = (*HAND, DOUBLE)
    events: list[CardEvent] = []
    for cards in [HAND[:1]] * 6 + [HAND] * 6 + _slide(HAND, DOUBLE, (X + 200, Y + 62)):
        events += first.update(_frame(cards))
    for _ in range(12):
        events += first.update(_frame(doubled))
    assert [e.quad.joined for e in events] == [False, False, True]

    class _Message:  # what _card_record reads of the contract message
        card, zone, confidence, method, serial = None, "seat:4", 0.0, "none", None

    saved = [_card_record(_Message(), e) for e in events]  # type: ignore[arg-type]
    assert [r["joined"] for r in saved] == [False, False, True]
    second = _tracker(profile)
    for record in saved:
        second.restore(*_placement(record))
    assert _run(second, [doubled] * 20) == []
    cleared = _run(second, [()] * 8)
    assert sorted(e for e, _, _ in cleared) == ["removed"] * 3


@pytest.mark.parametrize("record", [{}, {"joined": False}])
def test_a_card_saved_before_blobs_were_saved_is_one_card(record: dict[str, object]) -> None:
    corners = [[0.0, 0.0], [63.0, 0.0], [63.0, 88.0], [0.0, 88.0]]
    base = {"card": "QH", "zone": "dealer", "confidence": 0.9, "method": "index"}
    reading, zone, quad, _ = _placement({**base, "corners": corners, **record})
    assert reading == Reading("QH", 0.9, "index") and zone == "dealer"
    assert isinstance(quad, CardQuad) and not quad.joined


def test_a_card_laid_on_a_published_blob_is_one_more_placement(profile: DeckProfile) -> None:
    """A dealer's hit laid touching a corner-touching pair published as a blob: the blob
    grows by a card, one more unreadable placement under an id of its own; cleared, each
    placement is removed."""
    tracker = _tracker(profile)
    hit = PlacedCard("7S", "dealer", (420.0, 250.0), 10.0)  # over the five's far corner
    first = _events(
        tracker, [(ACE,)] * 6 + _slide((ACE,), FIVE, (460.0, 360.0)) + [(ACE, FIVE)] * 12
    )
    grown = _events(tracker, _slide((ACE, FIVE), hit, (560.0, 150.0)) + [(ACE, FIVE, hit)] * 16)
    placed = [(e.reading.code, e.quad.joined) for e in first + grown if e.event == "placed"]
    assert placed == [("AS", False), (None, True), (None, True)]
    ids = {e.track for e in first + grown}
    assert len(ids) == 3 and sorted(i for i, _ in tracker.on_table) == sorted(ids)
    gone = _events(tracker, [()] * 8)
    assert sorted(e.track for e in gone) == sorted(ids)
    assert {e.event for e in gone} == {"removed"}


def test_cards_pushed_together_then_moved_as_one_are_no_new_card(profile: DeckProfile) -> None:
    """The cards a blob hides go with it: moved as one, its paper is still theirs."""
    tracker = _tracker(profile)
    apart = _at(FIVE, 380.0, 330.0)
    _run(tracker, [(ACE, apart)] * 6 + _slide((ACE,), FIVE, apart.centre, steps=10))
    moves = [
        (_at(ACE, 300 + 5 * k, 250 + 2 * k), _at(FIVE, 360 + 5 * k, 310 + 2 * k))
        for k in range(1, 9)
    ]
    assert _run(tracker, [(ACE, FIVE)] * 12 + moves + [moves[-1]] * 16) == []
    assert sorted(_run(tracker, [()] * 8)) == [("removed", "5S", None), ("removed", "AS", None)]


def test_a_hand_over_a_blob_does_not_end_it(profile: DeckProfile) -> None:
    """The dealer's hand rests over a published blob while a card dealt below it settles:
    that card is another (it never lay on the blob), and the blob stays published, once."""
    tracker = _tracker(profile)
    doubled = (*HAND, DOUBLE)
    _run(tracker, [HAND[:1]] * 6 + [HAND] * 6 + _slide(HAND, DOUBLE, (X + 200, Y + 62)))
    assert _run(tracker, [doubled] * 12) == [("placed", *BLOB)]
    below = PlacedCard("9D", "seat:2", (X + 20, Y + 150), 0.0)
    events = _run(tracker, _slide(doubled, below, (X + 120, Y + 150), steps=5))
    # (4 frames: fewer than remove_frames, 6, after which hidden cards are taken as gone.)
    events += _run(tracker, [(*doubled, below)] * 4, hand=(X + 10, Y + 30, 72, 70))
    events += _run(tracker, [(*doubled, below)] * 16)
    assert events == [("placed", "9D", None)]
