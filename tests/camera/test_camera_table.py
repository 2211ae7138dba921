"""Table calibration: homography from markers or corners, zones, the check PNG; the wide layout."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from calibration.table import (
    TableCalibration,
    calibrate_from_corners,
    calibrate_from_markers,
    default_layout,
    draw_zones,
    parse_corners,
    wide_layout,
)
from hwsim.camera.render import CARD_H_MM, CARD_W_MM
from hwsim.camera.virtual import FAN_OFFSET_MM, TIGHT_SLOTS, VirtualCamera
from studio.cards import full_deck
from studio.errors import VisionError


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_markers_recover_the_camera(level: str) -> None:
    cam = VirtualCamera(level=level, seed=11)
    cal = calibrate_from_markers(cam.read(), cam.layout)
    assert cal.method == "aruco" and cal.markers_used == [0, 1, 2, 3]
    truth = cam.calibration()
    # Every zone centre maps to within 3 mm of the truth.
    for zone in cam.layout.zones:
        img = truth.to_image(np.array([zone.centre]))
        assert np.linalg.norm(cal.to_layout(img)[0] - np.array(zone.centre)) < 3.0, zone.name


def test_four_declared_corners() -> None:
    cam = VirtualCamera(level="medium", seed=3)
    lay = cam.layout
    corners = cam.calibration().to_image(
        np.array([[0, 0], [lay.width, 0], [lay.width, lay.height], [0, lay.height]])
    )
    text = ";".join(f"{x:.2f},{y:.2f}" for x, y in corners)
    cal = calibrate_from_corners(cam.size, parse_corners(text), lay)
    assert cal.method == "corners"
    for zone in lay.zones:
        img = cam.calibration().to_image(np.array([zone.centre]))[0]
        assert cal.zone_of((float(img[0]), float(img[1])))[0] == zone.name


def test_cards_are_attributed_to_the_zone_they_were_dealt_to(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="medium", seed=21)
    deals = [
        ("QH", "seat:1"),
        ("5C", "seat:1"),
        ("KD", "dealer"),
        ("9S", "dealer"),
        ("AH", "seat:7"),
        ("2D", "seat:4:h2"),
        ("TC", "seat:4"),
        ("6H", "seat:2:h2"),
    ]
    for code, zone in deals:
        cam.place(code, zone)
    cal = calibrate_from_markers(cam.read(), cam.layout)
    found = Recogniser(profile, cal).recognise(cam.read())
    got = sorted((f.reading.code, f.zone) for f in found)
    assert got == sorted(deals)
    assert all(f.zone_distance_mm == 0.0 for f in found)


def test_outside_points_go_to_the_nearest_zone() -> None:
    lay = default_layout()
    zone, dist = lay.attribute(lay.width / 2, 5.0)  # above the dealer box
    assert zone == "dealer" and 0 < dist < 10


def test_bad_inputs() -> None:
    blank = np.full((720, 1280, 3), 90, np.uint8)
    with pytest.raises(VisionError, match="found 0 of the layout's markers"):
        calibrate_from_markers(blank, default_layout())
    with pytest.raises(VisionError, match="four"):
        parse_corners("1,2;3,4")
    with pytest.raises(VisionError, match="degenerate"):
        calibrate_from_corners((100, 100), [(1, 1), (2, 2), (3, 3), (4, 4)], default_layout())


def test_save_load_and_check_png(tmp_path: Path) -> None:
    cam = VirtualCamera(level="easy", seed=2)
    frame = cam.read()
    cal = calibrate_from_markers(frame, cam.layout)
    cal.save(tmp_path / "table.json")
    again = TableCalibration.load(tmp_path / "table.json")
    assert np.allclose(again.homography, cal.homography)
    assert again.layout.zone_names == cal.layout.zone_names
    out = draw_zones(frame, again)
    assert out.shape == frame.shape and not np.array_equal(out, frame)
    assert cv2.imwrite(str(tmp_path / "check.png"), out)


def test_default_layout_is_unchanged() -> None:
    # The accuracy data set and the tests above are built on this geometry.
    lay = default_layout()
    assert (lay.width, lay.height) == (980.0, 551.0)
    assert len(lay.zones) == 15 and [m.id for m in lay.markers] == [0, 1, 2, 3]
    assert lay.zone("dealer").polygon == (
        (136.0, 12.0),
        (844.0, 12.0),
        (844.0, 130.0),
        (136.0, 130.0),
    )
    x0, y0 = lay.zone("seat:1").polygon[0]
    x1, y1 = lay.zone("seat:1").polygon[2]
    assert (round(x0, 2), y0, round(x1, 2), y1) == (832.86, 144.0, 970.0, 380.0)


def _box(zone_polygon: tuple[tuple[float, float], ...]) -> tuple[float, float, float, float]:
    pts = np.asarray(zone_polygon)
    (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
    return float(x0), float(y0), float(x1), float(y1)


def test_wide_layout_gives_every_hand_room_for_its_cards() -> None:
    lay = wide_layout(7)
    assert (lay.width, lay.height) == (1280.0, 740.0)
    assert lay.zone_names == ["dealer"] + [f"seat:{n}{h}" for n in range(1, 8) for h in ("", ":h2")]
    counts = {z.name: len(TIGHT_SLOTS.centres(lay, z.name)) for z in lay.zones}
    assert counts["dealer"] == 10
    assert all(counts[f"seat:{n}"] == 6 and counts[f"seat:{n}:h2"] == 4 for n in range(1, 8))
    gap_x, gap_y = TIGHT_SLOTS.gap_mm()
    assert gap_x >= 15 and gap_y >= 12  # between neighbouring cards, at the worst turn and jitter
    # The box a card can cover in each slot stays inside the slot's zone and clear of the
    # markers' white borders.
    a = np.radians(TIGHT_SLOTS.max_turn)
    half_w = (CARD_W_MM * np.cos(a) + CARD_H_MM * np.sin(a)) / 2 + TIGHT_SLOTS.jitter
    half_h = (CARD_W_MM * np.sin(a) + CARD_H_MM * np.cos(a)) / 2 + TIGHT_SLOTS.jitter
    for zone in lay.zones:
        x0, y0, x1, y1 = _box(zone.polygon)
        for cx, cy in TIGHT_SLOTS.centres(lay, zone.name):
            assert x0 <= cx - half_w and cx + half_w <= x1, zone.name
            assert y0 <= cy - half_h and cy + half_h <= y1, zone.name
            for m in lay.markers:
                white = m.size / 2 + m.size / 6
                dx = abs(cx - m.centre[0]) - half_w - white
                dy = abs(cy - m.centre[1]) - half_h - white
                assert max(dx, dy) >= 20, (zone.name, m.id)
    with pytest.raises(VisionError, match="1 to 7 seats"):
        wide_layout(8)


def test_markers_recover_the_wide_layout() -> None:
    cam = VirtualCamera(level="medium", seed=5, layout=wide_layout(7), size=(1600, 900))
    cal = calibrate_from_markers(cam.read(), cam.layout)
    assert cal.markers_used == [0, 1, 2, 3]
    truth = cam.calibration()
    for zone in cam.layout.zones:
        img = truth.to_image(np.array([zone.centre]))
        assert np.linalg.norm(cal.to_layout(img)[0] - np.array(zone.centre)) < 3.0, zone.name


def test_a_full_wide_table_is_found_card_by_card_in_its_zones(profile: DeckProfile) -> None:
    # Every slot of a 7-seat table taken (80 cards): no two cards merge in the detector.
    cam = VirtualCamera(
        level="easy", seed=4, layout=wide_layout(7), slots=TIGHT_SLOTS, size=(1600, 900)
    )
    deck = [c.code for c in full_deck()]
    rng = random.Random(4)
    for name in cam.layout.zone_names:
        for _ in TIGHT_SLOTS.centres(cam.layout, name):
            cam.place(rng.choice(deck), name)
    truth = cam.calibration()
    placed = [(c.code, c.zone, truth.to_image(np.array([c.centre]))[0]) for c in cam.cards]
    found = Recogniser(profile, truth).recognise(cam.read())
    assert len(found) == len(placed) == 80
    read = 0
    for f in found:
        code, zone, _ = min(placed, key=lambda p: float(np.hypot(*(p[2] - f.quad.centre))))
        assert f.zone == zone and f.zone_distance_mm == 0.0
        assert f.reading.code in (code, None)  # never a wrong card
        read += f.reading.code == code
    assert read >= 0.95 * len(found)


def test_a_full_zone_fans_the_next_card_inside_the_zone() -> None:
    cam = VirtualCamera(level="easy", seed=6, layout=wide_layout(7), slots=TIGHT_SLOTS)
    slots = TIGHT_SLOTS.centres(cam.layout, "seat:3")
    hand = [cam.place(code, "seat:3") for code in ("2S", "3S", "4S", "5S", "6S", "7S")]
    for card, slot in zip(hand, slots, strict=True):
        assert np.hypot(card.centre[0] - slot[0], card.centre[1] - slot[1]) <= 3.0
    fanned = cam.place("8S", "seat:3")
    last = hand[-1].centre
    _x0, _y0, x1, y1 = _box(cam.layout.zone("seat:3").polygon)
    expected = (
        min(last[0] + FAN_OFFSET_MM[0], x1 - CARD_W_MM / 2),
        min(last[1] + FAN_OFFSET_MM[1], y1 - CARD_H_MM / 2),
    )
    assert fanned.centre == pytest.approx(expected)
    assert cam.layout.attribute(*fanned.centre) == ("seat:3", 0.0)
    # Taking the fanned card away frees no slot; taking a slotted card frees its slot.
    assert cam.remove("8S")
    assert cam.place("9S", "seat:3").centre == pytest.approx(expected)
    assert cam.remove("3S")
    again = cam.place("TS", "seat:3").centre
    assert np.hypot(again[0] - slots[1][0], again[1] - slots[1][1]) <= 3.0


def test_fanned_cards_stay_in_their_zone_on_the_default_layout() -> None:
    # Seven seats on the default layout leave a main hand two slots; the rest are fanned,
    # and a long hand never drifts into the split box below it.
    cam = VirtualCamera(level="easy", seed=7)
    for code in ("2H", "3H", "4H", "5H", "6H", "7H"):
        card = cam.place(code, "seat:5")
        assert cam.layout.attribute(*card.centre) == ("seat:5", 0.0), code
