"""The simulator's real-card stress conditions, curl and sheen (``hwsim.camera.wear``):
what they draw, and that they leave the levels' frames as they were."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.table import default_layout
from hwsim.camera.dataset import scenes
from hwsim.camera.render import (
    BLACK,
    CARD_H_MM,
    CARD_W_MM,
    FACE_H,
    FACE_W,
    TABLE_STYLE,
    PlacedCard,
    background,
    camera_homography,
    composite_card,
    render_card,
)
from hwsim.camera.wear import Curl, Sheen, Wear, bend_radius, camera_over, curled_points

CARD_MM = (CARD_W_MM, CARD_H_MM)


def test_without_wear_the_frames_are_the_levels_own() -> None:
    """``Wear()`` (all off) draws nothing: the same frames, bit for bit, as no wear."""
    for level in ("easy", "hard"):
        plain = list(scenes(level, 2, seed=5000))
        off = list(scenes(level, 2, seed=5000, wear=Wear()))
        for a, b in zip(plain, off, strict=True):
            assert np.array_equal(a.frame, b.frame)


def test_worn_scenes_hold_the_same_cards_in_the_same_places() -> None:
    """Wear draws from a stream of its own: the cards, zones and poses are the level's."""
    plain = list(scenes("medium", 3, seed=5000))
    worn = list(scenes("medium", 3, seed=5000, wear=Wear(curl_mm=6.0, sheen=1.0)))
    for a, b in zip(plain, worn, strict=True):
        assert [(c.code, c.zone, c.centre, c.angle) for c in a.cards] == [
            (c.code, c.zone, c.centre, c.angle) for c in b.cards
        ]
        assert not np.array_equal(a.frame, b.frame)


@pytest.mark.parametrize("lift", [1.0, 4.0, 8.0])
def test_the_bend_lifts_the_edges_by_the_lift(lift: float) -> None:
    r = bend_radius(CARD_W_MM / 2, lift)
    assert r * (1 - math.cos(CARD_W_MM / 2 / r)) == pytest.approx(lift, abs=1e-6)


def test_a_bent_card_is_narrower_across_the_bend_and_its_edge_tilted() -> None:
    """Edges lifted 8 mm across the width: seen from above the card is 2.8 mm narrower,
    the long edges' paper tilted ~30 degrees (an index there is foreshortened), the
    length unchanged."""
    curl = Curl("width", 8.0, arch=False, light=(0.0, 0.0, 1.0))
    corners = np.array([[-31.5, -44.0], [31.5, 44.0]])
    seen, z, lit = curled_points(corners, curl, CARD_MM)
    assert seen[1, 0] - seen[0, 0] == pytest.approx(60.2, abs=0.1)
    assert seen[1, 1] - seen[0, 1] == pytest.approx(88.0)
    assert z.tolist() == pytest.approx([8.0, 8.0])
    assert math.degrees(math.acos(lit[0])) == pytest.approx(29.8, abs=0.2)
    arched = Curl("length", 4.0, arch=True, light=(0.0, 0.0, 1.0))
    _, z, _ = curled_points(np.array([[0.0, 0.0], [0.0, 44.0]]), arched, CARD_MM)
    assert z.tolist() == pytest.approx([4.0, 0.0])


def test_a_curled_card_s_outline_is_no_longer_a_quadrilateral() -> None:
    """A card bent 8 mm far off the camera's axis: its lifted long edges are seen farther
    out by parallax, so the middle of its short edges (low) falls inside the line between
    its corners (high) — the outline bows by a pixel or more; flat, it does not."""
    layout = default_layout()
    rng = np.random.default_rng(3)
    size = (1280, 720)
    h = camera_homography(rng, "easy", size, layout)
    placed = PlacedCard("9S", "seat:1", (layout.width - 80.0, layout.height - 80.0), 0.0)
    face = render_card("9S", TABLE_STYLE)
    camera = camera_over(h, size)
    curl = Curl("width", 8.0, arch=False, light=(0.0, 0.0, 1.0))
    frame = background(layout, h, size)
    quad = composite_card(frame, face, placed, h, curl=curl, camera=camera)
    flat = composite_card(background(layout, h, size), face, placed, h)
    # The corners moved out from the flat card's (parallax of 8 mm, ~1.8 px here) ...
    assert float(np.abs(quad - flat).max()) > 1.0
    # ... while the middle of the top edge, on the table, stayed where the flat card's is:
    # the top edge, seen, is a bent line.
    mid_flat = (flat[0] + flat[1]) / 2
    chord_mid = (quad[0] + quad[1]) / 2
    assert float(np.linalg.norm(chord_mid - mid_flat)) > 1.0


def test_a_full_sheen_washes_the_ink_under_its_peak_out_to_white() -> None:
    """A card's highlight goes into the frame's light layer, laid like the card: a sheen
    of 1.0 centred on the corner index's black ink makes it as white as clipped paper
    once the light is added; half of it leaves the ink mid-grey; the cloth beside the
    card gets none of the card's highlight."""
    layout = default_layout()
    size = (1280, 720)
    h = camera_homography(np.random.default_rng(3), "easy", size, layout)
    placed = PlacedCard("KS", "seat:1", (layout.width / 2, layout.height / 2), 0.0)
    face = render_card("KS", TABLE_STYLE)
    ink = np.argwhere((face[:60, :50] == BLACK).all(axis=2))
    y, x = (float(v) for v in ink[len(ink) // 2])
    for strength, lo, hi in ((1.0, 250, 255), (0.5, 110, 190)):
        frame = background(layout, h, size)
        light = np.zeros((size[1], size[0], 3), np.float32)
        spot = Sheen((x, y), (12.0, 12.0), 0.0, strength, (1.0, 1.0, 1.0))
        quad = composite_card(frame, face, placed, h, sheen=spot, light=light)
        m = cv2.getPerspectiveTransform(
            np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]], np.float32),
            quad.astype(np.float32),
        )
        px, py = cv2.perspectiveTransform(np.array([[[x, y]]], np.float32), m)[0, 0]
        seen = np.clip(frame.astype(np.float32) + light, 0, 255)[round(py), round(px)]
        assert lo <= float(seen.mean()) <= hi, (strength, seen)
        outside = quad.min(axis=0).astype(int) - 6
        assert not light[outside[1], outside[0]].any()


@pytest.mark.parametrize(("curl", "sheen"), [(-1.0, 0.0), (13.0, 0.0), (0.0, 2.0)])
def test_wear_out_of_range_is_refused(curl: float, sheen: float) -> None:
    with pytest.raises(ValueError):
        Wear(curl_mm=curl, sheen=sheen)
