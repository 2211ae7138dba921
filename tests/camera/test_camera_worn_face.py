"""The simulator's used cards (``hwsim.camera.worn_face``): worn edges, scuffs and dirt,
a crease, faded ink — what each draws, that it is reproducible, and that it stays off
(and out of the curled and shiny frames' random stream) when its level is 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hwsim.camera.dataset import scenes
from hwsim.camera.render import PX_PER_MM, TABLE_STYLE, card_mask, render_card
from hwsim.camera.wear import Wear
from hwsim.camera.worn_face import INDEX_MM, wear_face

MASK = card_mask()
KS = render_card("KS", TABLE_STYLE)


def test_a_worn_face_is_the_same_for_the_same_stream() -> None:
    levels = {"edge": 1.0, "scuffs": 1.0, "crease": 1.0, "fade": 0.4}
    a = wear_face(KS, MASK, np.random.default_rng(7), **levels)
    b = wear_face(KS, MASK, np.random.default_rng(7), **levels)
    c = wear_face(KS, MASK, np.random.default_rng(8), **levels)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_no_use_changes_nothing_and_draws_nothing() -> None:
    rng = np.random.default_rng(3)
    face, mask = wear_face(KS, MASK, rng)
    assert np.array_equal(face, KS) and np.array_equal(mask, MASK)
    assert rng.random() == np.random.default_rng(3).random()


def test_use_leaves_the_curl_and_sheen_of_every_card_as_they_were() -> None:
    """Use is drawn from a stream of its own (a child of the wear stream): every card of
    a curled, shiny and used frame is bent as in the curled and shiny frame (the same
    outline), the frames differing only by the use."""
    for level in ("easy", "hard"):
        plain = list(scenes(level, 2, seed=5000, wear=Wear(curl_mm=6.0, sheen=1.0)))
        used = list(scenes(level, 2, seed=5000, wear=Wear(curl_mm=6.0, sheen=1.0, scuffs=1.0)))
        for a, b in zip(plain, used, strict=True):
            for card, worn in zip(a.cards, b.cards, strict=True):
                assert np.array_equal(card.image_quad, worn.image_quad)
            assert not np.array_equal(a.frame, b.frame)


def test_faded_ink_loses_half_to_all_of_the_level_of_its_contrast() -> None:
    ink = (KS[:, :, 0] < 60) & (MASK == 255)
    paper = np.median(KS[MASK == 255].astype(np.float64), axis=0)
    before = float(np.abs(KS[ink].astype(np.float64) - paper).mean())
    for seed in range(5):
        face, mask = wear_face(KS, MASK, np.random.default_rng(seed), fade=0.6)
        after = float(np.abs(face[ink].astype(np.float64) - paper).mean())
        assert 1 - 0.6 - 0.01 <= after / before <= 1 - 0.3 + 0.01
        assert np.array_equal(mask, MASK)  # fading leaves the outline


def test_worn_edges_change_the_outline_and_the_border_only() -> None:
    """Edge wear cuts the card only within its corners' and edges' reach (a chip's legs
    up to 5 mm, a nick 1 mm deep, a corner up to 2.5 mm rounder) and discolours only a
    band up to 1.2 mm wide inside the new outline; the middle of the face is untouched.
    Over 20 cards some corners are chipped and some edges nicked."""
    h, w = MASK.shape
    yy, xx = np.mgrid[0:h, 0:w]
    from_edge = np.minimum(np.minimum(xx, w - 1 - xx), np.minimum(yy, h - 1 - yy)) / PX_PER_MM
    corner = np.hypot(
        np.minimum(xx, w - 1 - xx) / PX_PER_MM, np.minimum(yy, h - 1 - yy) / PX_PER_MM
    )
    chipped = nicked = 0
    for seed in range(20):
        face, mask = wear_face(KS, MASK, np.random.default_rng(seed), edge=1.0)
        lost = MASK.astype(int) - mask.astype(int) > 64
        assert mask.max() == 255 and (mask <= MASK).all()
        assert ((from_edge <= 1.1) | (corner <= 8.0))[lost].all()
        chipped += bool((lost & (corner > 3.0) & (corner < 6.0)).sum() > 20)
        nicked += bool((lost & (corner > 10.0)).any())
        changed = np.abs(face.astype(int) - KS.astype(int)).max(axis=2) > 2
        assert ((from_edge <= 1.2 + 1.0) | (corner <= 9.5))[changed].all()
        assert changed.sum() > 100
    assert chipped >= 2 and nicked >= 10, (chipped, nicked)


def test_scuffs_and_dirt_are_faint_and_some_lie_over_an_index() -> None:
    """Scuffs grey the face by at most about half of the way to grey; over 10 cards,
    most have a mark over an index corner."""
    (x0, x1), (y0, y1) = INDEX_MM
    ppm = PX_PER_MM
    over_index = 0
    for seed in range(10):
        face, mask = wear_face(KS, MASK, np.random.default_rng(seed), scuffs=1.0)
        assert np.array_equal(mask, MASK)
        diff = np.abs(face.astype(int) - KS.astype(int)).max(axis=2)
        assert diff.any()
        corner = diff[round(y0 * ppm) : round(y1 * ppm), round(x0 * ppm) : round(x1 * ppm)]
        far = diff[::-1, ::-1][round(y0 * ppm) : round(y1 * ppm), round(x0 * ppm) : round(x1 * ppm)]
        over_index += bool((corner > 8).any() or (far > 8).any())
    assert over_index >= 5


def test_a_crease_shades_one_side_of_the_fold_darker() -> None:
    """Blank paper folded once: far from the fold one side is 4 to 8 % darker than the
    other, and along the fold a thin dark line."""
    blank = np.full_like(KS, 200)
    face, _ = wear_face(blank, MASK, np.random.default_rng(11), crease=1.0)
    values = np.unique(face[..., 0])
    lo_side, hi_side = int(np.percentile(face, 5)), int(np.percentile(face, 95))
    assert 200 * 0.92 - 1 <= lo_side <= 200 * 0.96 + 1, values
    assert hi_side == 200
    assert int(face.min()) < 200 * 0.92 - 5  # the fold's line


@pytest.mark.parametrize(
    "levels",
    [
        {"edge": 1.1},
        {"edge": -0.1},
        {"scuffs": 2.0},
        {"crease": -1.0},
        {"fade": 0.9},
        {"fade": math.nan},
    ],
)
def test_use_out_of_range_is_refused(levels: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Wear(**levels)


def test_a_face_and_a_mask_of_different_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in size"):
        wear_face(KS, MASK[:-1], np.random.default_rng(0), edge=1.0)
