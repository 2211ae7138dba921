"""Table calibration: homography from markers or corners, zones, the check PNG."""

from __future__ import annotations

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
)
from hwsim.camera.virtual import VirtualCamera
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
