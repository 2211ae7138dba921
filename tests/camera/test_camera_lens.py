"""The lens model: radial distortion fitted from the markers, and every use of the table
calibration that goes through it (zones, card sizes, the top-down view, the check PNG)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile
from calibration.lens import K1_BOUND, distort, fit_radial, undistort
from calibration.recogniser import Recogniser
from calibration.table import TableCalibration, calibrate_from_markers, draw_zones
from hwsim.camera.render import barrel
from hwsim.camera.virtual import VirtualCamera
from studio.cli import app
from studio.errors import VisionError

SIZE = (1280, 720)


@pytest.mark.parametrize("k1", [-0.3, -0.2, -0.05, 0.05, 0.2])
def test_undistort_inverts_distort(k1: float) -> None:
    rng = np.random.default_rng(1)
    ideal = rng.uniform((0, 0), SIZE, (500, 2))
    if k1 < 0:
        # A barrel shows nothing past the radius where r (1 + k1 r^2) peaks.
        r = np.hypot(*((ideal - (640, 360)) / 640).T)
        ideal = ideal[r < (-1 / (3 * k1)) ** 0.5 * 0.95]
    seen = distort(ideal, k1, SIZE)
    assert np.abs(undistort(seen, k1, SIZE) - ideal).max() < 1e-6
    assert np.array_equal(distort(ideal, 0.0, SIZE), ideal)
    assert np.array_equal(undistort(ideal, 0.0, SIZE), ideal)


def test_distort_is_radial_about_the_centre() -> None:
    centre = np.array([[640.0, 360.0]])
    assert np.array_equal(distort(centre, -0.2, SIZE), centre)
    # A point at half the longer side from the centre moves to r (1 + k1 r^2) = 0.8 of it.
    edge = distort(np.array([[1280.0, 360.0]]), -0.2, SIZE)[0]
    assert edge == pytest.approx((640 + 640 * 0.8, 360))


@pytest.mark.parametrize("k1", [-0.25, -0.08, 0.0, 0.04])
def test_fit_radial_recovers_a_lens_from_exact_points(k1: float) -> None:
    camera = np.array([[1.1, 0.05, 90.0], [0.02, 1.0, 70.0], [0.00002, 0.00011, 1.0]])
    lay = np.array([[x, y] for x in np.linspace(0, 980, 6) for y in np.linspace(0, 551, 4)])
    ideal = cv2.perspectiveTransform(lay.reshape(-1, 1, 2), camera).reshape(-1, 2)
    seen = distort(ideal, k1, SIZE)
    fitted, h, residual = fit_radial(seen, lay, SIZE)
    assert fitted == pytest.approx(k1, abs=1e-4)
    assert h is not None and residual < 0.01


def _lens_frame(
    k1: float, *cards: tuple[str, str], size: tuple[int, int] = SIZE
) -> tuple[VirtualCamera, np.ndarray]:
    cam = VirtualCamera(level="easy", seed=5, size=size)
    for code, zone in cards:
        cam.place(code, zone)
    return cam, barrel(cam.read(), k1)


@pytest.mark.parametrize("k1", [-0.2, -0.08, 0.02])
def test_the_markers_fit_the_lens(k1: float) -> None:
    cam, frame = _lens_frame(k1)
    cal = calibrate_from_markers(frame, cam.layout)
    plain = calibrate_from_markers(frame, cam.layout, lens=False)
    assert cal.lens_k1 == pytest.approx(k1, abs=0.01)
    assert cal.residual_mm < plain.residual_mm / 2
    # The fit reports what the homography alone left, for the operator; --no-lens did not try.
    assert cal.plain_residual_mm == pytest.approx(plain.residual_mm)
    assert plain.plain_residual_mm is None
    truth = cam.calibration()
    for zone in cam.layout.zones:
        seen = distort(truth.to_image(np.array([zone.centre])), k1, cam.size)
        assert np.linalg.norm(cal.to_layout(seen)[0] - zone.centre) < 3.0, zone.name


def test_no_lens_is_fitted_to_a_camera_without_one() -> None:
    """The marker corners' own error fits a k1 of a few thousandths, which would cost
    accuracy: it is kept only when it halves the residual."""
    cam = VirtualCamera(level="hard", seed=5)
    cal = calibrate_from_markers(cam.read(), cam.layout)
    assert cal.lens_k1 == 0.0 and cal.plain_residual_mm == pytest.approx(cal.residual_mm)


def test_the_lens_is_saved_and_old_files_have_none(tmp_path: Path) -> None:
    cam, frame = _lens_frame(-0.2)
    cal = calibrate_from_markers(frame, cam.layout)
    cal.save(tmp_path / "t.json")
    again = TableCalibration.load(tmp_path / "t.json")
    assert again.lens_k1 == pytest.approx(cal.lens_k1, abs=1e-6)
    point = np.array([[100.0, 80.0]])
    assert np.allclose(again.to_layout(point), cal.to_layout(point))
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["lens"]["model"] == "radial-k1"
    del data["lens"]  # as written before the lens model
    assert TableCalibration.from_dict(data).lens_k1 == 0.0
    data["lens"] = {"model": "fisheye", "k1": 0.1}
    with pytest.raises(VisionError, match="unknown lens model 'fisheye'"):
        TableCalibration.from_dict(data)
    data["lens"] = {"model": "radial-k1", "k1": 2.0}
    with pytest.raises(VisionError, match=f"outside -{K1_BOUND}"):
        TableCalibration.from_dict(data)


def test_the_top_down_view_undistorts() -> None:
    """Through a lens, the view straight down is a remap: the layout's markers land where
    the view's own calibration puts them, and points go to the view and back."""
    cam, frame = _lens_frame(-0.2)
    cal = calibrate_from_markers(frame, cam.layout)
    view = cal.top_down(1280)
    assert view.maps is not None
    image_pts = cal.to_image(np.array([[100.0, 100.0], [880.0, 450.0]]))
    assert np.abs(view.to_image(view.to_view(image_pts)) - image_pts).max() < 1e-6
    warped = view.warp(frame)
    corners = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    ).detectMarkers(cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY))
    found = dict(zip(corners[1].ravel().tolist(), corners[0], strict=True))
    for marker in cam.layout.markers:
        expected = view.calibration.to_image(marker.corners())
        assert np.abs(found[marker.id].reshape(4, 2) - expected).max() < 2.0, marker.id


def test_cards_in_the_corners_are_read_through_a_lens(profile: DeckProfile) -> None:
    """A barrel shrinks the cards towards the frame's corners; a calibration that knows
    the lens expects them that size, and puts them in their zones. At 720p the corner
    cards are too small to read, and said to be; at 1080p they are read."""
    deals = [("QH", "seat:1"), ("9S", "seat:7"), ("KD", "dealer"), ("4C", "seat:4")]
    for size in (SIZE, (1920, 1080)):
        cam, frame = _lens_frame(-0.2, *deals, size=size)
        cal = calibrate_from_markers(frame, cam.layout)
        found = {f.zone: f.reading for f in Recogniser(profile, cal).recognise(frame)}
        assert sorted(found) == sorted(zone for _, zone in deals)
        for code, zone in deals:
            reading = found[zone]
            if size == SIZE and zone in ("seat:1", "seat:7"):
                assert reading.code is None and reading.reason.startswith("too small to read")
            else:
                assert reading.code == code, (size, zone, reading)


def test_the_check_png_draws_the_zones_bent(tmp_path: Path) -> None:
    cam, frame = _lens_frame(-0.2)
    cal = calibrate_from_markers(frame, cam.layout)
    out = draw_zones(frame, cal)
    assert out.shape == frame.shape and not np.array_equal(out, frame)


def test_calibrate_table_reports_the_lens(tmp_path: Path) -> None:
    runner = CliRunner()
    cam, frame = _lens_frame(-0.2)
    image = tmp_path / "lens.png"
    cv2.imwrite(str(image), frame)
    r = runner.invoke(
        app, ["calibrate", "table", "--image", str(image), "--out", str(tmp_path / "t.json")]
    )
    assert r.exit_code == 0, r.output
    assert "lens: radial distortion k1 -0.20" in r.output and "(barrel)" in r.output
    plain = calibrate_from_markers(frame, cam.layout, lens=False)
    assert f"without it the residual is {plain.residual_mm:.2f} mm" in r.output
    # Not a camera at an angle: the lens, which squeezes the corners' cards.
    assert "but the lens squeezes the cards towards the corners" in r.output
    r = runner.invoke(
        app,
        [
            "calibrate",
            "table",
            "--image",
            str(image),
            "--out",
            str(tmp_path / "t.json"),
            "--no-lens",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "lens: not fitted (--no-lens)" in r.output
    assert TableCalibration.load(tmp_path / "t.json").lens_k1 == 0.0


def test_only_a_strong_lens_takes_the_view_straight_down() -> None:
    """A mild lens's squeeze costs nothing in the frame (and the view a third of the
    frame rate); a strong one's hides cards from detection there."""
    for k1, oblique in ((-0.08, False), (-0.2, True)):
        cam, frame = _lens_frame(k1)
        cal = calibrate_from_markers(frame, cam.layout)
        assert cal.squeeze(lens=False) > 0.9 > cal.squeeze()
        assert Recogniser(None, cal).oblique is oblique, k1


def test_a_frame_of_another_size_is_refused() -> None:
    cam, frame = _lens_frame(-0.2)
    rec = Recogniser(None, calibrate_from_markers(frame, cam.layout))
    with pytest.raises(VisionError, match="fitted on 1280x720 frames, this one is 640x360"):
        rec.recognise(cv2.resize(frame, (640, 360)))
