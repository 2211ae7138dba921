"""Blur beyond the templates: smeared or unfocused glyphs are not read (calibration.recogniser)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.deck_profile import DeckProfile, card_scale
from calibration.detect import CANON_H, CANON_W, CardQuad, order_corners
from calibration.recogniser import (
    FOCUS_BLUR_CANONICAL_MAX,
    FOCUS_BLUR_MAX,
    MOTION_BLUR_MAX,
    CardFound,
    Recogniser,
    edge_blur,
    focus_blur,
    focus_blur_limit,
    motion_blur,
    sharpened,
)
from hwsim.camera.dataset import scenes, true_calibration
from hwsim.camera.render import Scene


def _smeared(frame: np.ndarray, length: int) -> np.ndarray:
    """``frame`` blurred along a horizontal line ``length`` pixels long."""
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    return np.asarray(cv2.filter2D(frame, -1, kernel), np.uint8)


def test_cards_smeared_by_motion_are_unreadable_not_misread(deck_profile: DeckProfile) -> None:
    """Six generated medium frames (72 cards) smeared along a 9 px line: read anyway, 11
    came out as confident look-alikes (8C as 8S, 2D as 2H). Their edges across the motion
    are blurred more than those along it, and such cards are not read by their index."""
    misread, smeared, cards = 0, 0, 0
    for scene in scenes("medium", 6, seed=31):
        rec = Recogniser(deck_profile, true_calibration(scene))
        for found in rec.recognise(_smeared(scene.frame, 9)):
            cards += 1
            truth = min(
                scene.cards,
                key=lambda c: math.dist(found.quad.centre, tuple(c.image_quad.mean(axis=0))),
            )
            code = found.reading.code
            misread += code is not None and code != truth.code
            smeared += (found.reading.reason or "").startswith("motion blur")
    assert cards == 72
    assert misread == 0
    assert smeared >= 0.8 * cards


def test_sharp_cards_are_far_below_the_motion_blur_limit() -> None:
    """Cards of every level as the camera sees them, unsmeared: both pairs of edges alike."""
    for level in ("easy", "medium", "hard"):
        measured = []
        for scene in scenes(level, 2, seed=32):
            rec = Recogniser(None, true_calibration(scene))
            values = [motion_blur(scene.frame, q) for q in rec.find(scene.frame)]
            measured += [v for v in values if v is not None]
        assert len(measured) >= 20
        assert max(measured) < 0.6 * MOTION_BLUR_MAX


def test_a_card_with_no_edge_to_measure_is_not_judged() -> None:
    """A card on a surface as light as its paper shows no step at its edges: no verdict."""
    frame = np.full((200, 300, 3), 235, np.uint8)
    box = cv2.boxPoints(((150, 100), (56, 78), 10))
    cv2.fillConvexPoly(frame, np.round(box).astype(np.int32), (240, 240, 240))
    quad = CardQuad(order_corners(np.asarray(box, np.float64)))
    assert motion_blur(frame, quad) is None


def _truth(scene: Scene, found: CardFound) -> str:
    return min(
        scene.cards, key=lambda c: math.dist(found.quad.centre, tuple(c.image_quad.mean(axis=0)))
    ).code


def test_cards_out_of_focus_are_unreadable_not_misread(profile: DeckProfile) -> None:
    """Medium frames blurred by a further 2 px, read with another print's profile: without
    the focus check 4 of these 48 cards came out as confident look-alikes (24 in 480).
    Every card is blurred all round, and is not read by its index; its guess is still
    given, for the tracker to see attempts that disagree."""
    misread = unfocused = guessed = cards = 0
    for scene in scenes("medium", 4, seed=6100):
        rec = Recogniser(profile, true_calibration(scene))
        for found in rec.recognise(cv2.GaussianBlur(scene.frame, (0, 0), 2.0)):
            cards += 1
            code = found.reading.code
            misread += code is not None and code != _truth(scene, found)
            if found.reading.reason.startswith("out of focus"):
                unfocused += 1
                guessed += found.reading.guess is not None
                assert found.reading.confidence == 0.0  # a guess only
    assert cards == 48
    assert misread == 0
    assert unfocused >= 0.8 * cards
    assert guessed >= 0.8 * unfocused


def test_sharp_cards_are_within_the_focus_limit() -> None:
    """Cards of every level as the camera sees them: the hard level's blur (up to 1.3 px)
    is read; its sharpest sides but one measured 1.41 (median) to 1.79 px on 4,800 cards
    at 720p, none past the limit of its size."""
    for level in ("easy", "medium", "hard"):
        measured = []
        for scene in scenes(level, 3, seed=33):
            for q in Recogniser(None, true_calibration(scene)).find(scene.frame):
                if (spreads := edge_blur(scene.frame, q)) is not None:
                    measured.append(focus_blur(spreads) / focus_blur_limit(card_scale(q)))
        assert len(measured) >= 30
        assert max(measured) < 1.0


def test_the_focus_limit_follows_the_cards_size() -> None:
    """Blur touches a large card's glyphs less, a small card's more: the limit grows with
    the card beyond the coarsest scale the templates are learned at, and shrinks with it
    once the blur as the canonical card shows it would pass FOCUS_BLUR_CANONICAL_MAX."""
    assert focus_blur_limit(0.3) == focus_blur_limit(0.5) == FOCUS_BLUR_MAX
    assert focus_blur_limit(1.0) == 2 * FOCUS_BLUR_MAX
    assert focus_blur_limit(0.22) == pytest.approx(0.22 * FOCUS_BLUR_CANONICAL_MAX)
    assert focus_blur_limit(0.22) < FOCUS_BLUR_MAX


def test_small_cards_out_of_focus_are_unreadable_not_misread(deck_profile: DeckProfile) -> None:
    """Medium frames at 960x540 (cards 0.22-0.25 of the canonical size) blurred by a further
    1.5 px, read with the deck's own profile: 3 in 480 came out as confident look-alikes
    before the blur was also held to the canonical card's (9C as 9S at 1.0)."""
    misread = unfocused = cards = 0
    for scene in scenes("medium", 14, seed=4343, size=(960, 540)):
        rec = Recogniser(deck_profile, true_calibration(scene))
        for found in rec.recognise(cv2.GaussianBlur(scene.frame, (0, 0), 1.5)):
            if found.reading.reason.startswith("too small"):
                continue  # below the coarsest templates: never read at all
            cards += 1
            code = found.reading.code
            misread += code is not None and code != _truth(scene, found)
            unfocused += found.reading.reason.startswith("out of focus")
    assert cards >= 100
    assert misread == 0
    assert unfocused >= 0.6 * cards  # 75 of 112 measured


def test_cards_a_little_out_of_focus_are_read_sharpened(profile: DeckProfile) -> None:
    """Medium frames blurred by a further 1.25 px, within the focus limit, read with another
    print's profile: unsharpened, 7C read as a confident 7S in 480 such cards and 24 % were
    unreadable; sharpened at the frame's scale, 11 % (seeds 4242, 4343, 4444: 0 look-alikes
    in 1,440). Here 8 frames of another seed: 90 of 96 read, unsharpened 77."""
    misread = read = cards = 0
    for scene in scenes("medium", 8, seed=6200):
        rec = Recogniser(profile, true_calibration(scene))
        for found in rec.recognise(cv2.GaussianBlur(scene.frame, (0, 0), 1.25)):
            cards += 1
            code = found.reading.code
            misread += code is not None and code != _truth(scene, found)
            read += code is not None and code == _truth(scene, found)
    assert cards == 96
    assert misread == 0
    assert read >= 0.88 * cards, read


def test_sharpening_steepens_a_blurred_edge_and_keeps_flat_paper() -> None:
    """The unsharp mask works at the frame's scale: a step blurred by 1.2 frame pixels, on
    a card warped from 0.3 of the canonical size, comes out steeper; paper stays paper."""
    scale = 0.3
    step = np.full((CANON_H, CANON_W, 3), 230, np.uint8)
    step[:, CANON_W // 2 :] = 40
    blurred = np.asarray(cv2.GaussianBlur(step, (0, 0), 1.2 / scale), np.uint8)
    out = sharpened(blurred, scale)

    def width(img: np.ndarray) -> int:
        row = img[CANON_H // 2, :, 0].astype(float)
        return int(np.count_nonzero((row < 210) & (row > 60)))  # 10-90 % of the step

    assert width(out) <= 0.8 * width(blurred)  # measured 8 px against 10
    assert abs(float(out[:, :40].mean()) - 230) < 1 and abs(float(out[:, -40:].mean()) - 40) < 1
