"""docs/camera.md's *Reading real photographs: the steps*, walked on a cloth of our own.

A real cloth has no ArUco markers and rarely our default's shape: here a 1200 x 700 mm
cloth with a dealer box and five seats on an arc (wedges as quadrilaterals), fitted by
its four declared corners (step 3) and read with a deck profile (step 4). Then the slips
a person makes at step 3, each of which must be refused with what to do.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image as PILImage
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile
from calibration.table import Layout, Zone
from hwsim.camera.render import PlacedCard, background, camera_homography, compose
from studio.cli import app

runner = CliRunner()

CLOTH = (1200.0, 700.0)
DEALT = [("QH", "seat:1"), ("5H", "seat:2"), ("TS", "seat:3"), ("AC", "seat:5"), ("7D", "dealer")]


def arc_layout() -> Layout:
    """Five seats on an arc round the dealer, seat 1 on the camera's right."""
    cx, cy, near, far = 600.0, 100.0, 320.0, 580.0
    zones = [Zone("dealer", ((450, 20), (750, 20), (750, 140), (450, 140)))]
    for i in range(5):
        a0, a1 = math.radians(158 - 28 * i), math.radians(134 - 28 * i)
        pts = [(cx + near * math.cos(a), cy + near * math.sin(a)) for a in (a0, a1)]
        pts += [(cx + far * math.cos(a), cy + far * math.sin(a)) for a in (a1, a0)]
        zones.append(Zone(f"seat:{5 - i}", tuple(pts)))
    return Layout(*CLOTH, tuple(zones))


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory, deck_profile: DeckProfile) -> dict[str, Any]:
    """The files a person has at step 3: a layout.json, an empty table, a dealt round, a deck."""
    d = tmp_path_factory.mktemp("walk")
    lay = arc_layout()
    layout = lay.to_dict()
    del layout["markers"]  # a cloth without markers, as a person writes it
    (d / "layout.json").write_text(json.dumps(layout))
    size = (1920, 1080)
    hom = camera_homography(np.random.default_rng(3), "medium", size, lay)
    empty = background(lay, hom, size)
    cv2.imwrite(str(d / "empty.png"), empty)
    cards = [PlacedCard(code, zone, lay.zone(zone).centre, 10.0) for code, zone in DEALT]
    cv2.imwrite(str(d / "round.png"), compose(empty, cards, hom))
    deck_profile.save(d / "deck.json")
    w, h = CLOTH
    cloth = np.array([[[0, 0]], [[w, 0]], [[w, h]], [[0, h]]], np.float64)
    corners = cv2.perspectiveTransform(cloth, hom).reshape(-1, 2)
    return {"dir": d, "corners": [(round(x), round(y)) for x, y in corners]}


def _corners(points: list[tuple[int, int]]) -> str:
    return ";".join(f"{x},{y}" for x, y in points)


def _table(walk: dict[str, Any], corners: str, layout: Path | None = None) -> Any:
    d = walk["dir"]
    args = ["calibrate", "table", "--image", str(d / "empty.png")]
    args += ["--layout", str(layout or d / "layout.json"), "--corners", corners]
    return runner.invoke(app, [*args, "--out", str(d / "table.json"), "--check", str(d / "c.png")])


def _recognise(d: Path, table: str) -> list[str]:
    return ["recognise", "--deck", str(d / "deck.json"), "--table", str(d / table)]


def test_a_cloth_without_markers_fitted_by_its_corners_puts_cards_in_its_zones(
    walk: dict[str, Any],
) -> None:
    d = walk["dir"]
    r = _table(walk, _corners(walk["corners"]))
    assert r.exit_code == 0, r.output
    assert "zones: dealer, seat:5, seat:4, seat:3, seat:2, seat:1" in r.stdout
    # Four points fit any homography exactly: no residual to trust, the PNG to look at.
    assert "fit residual: none (four corners fit exactly)" in r.stdout
    assert "warning" not in r.stdout, r.stdout
    check = cv2.imread(str(d / "c.png"))
    empty = cv2.imread(str(d / "empty.png"))
    assert check.shape == empty.shape
    # The check PNG tints seat:3's wedge, and not the cloth between seats.
    cal = json.loads((d / "table.json").read_text())
    inverse = np.linalg.inv(np.asarray(cal["homography_image_to_layout"]))
    seat3 = arc_layout().zone("seat:3").centre
    gap = (600.0, 250.0)  # between the dealer box and the arc
    x3, y3 = np.round(cv2.perspectiveTransform(np.array([[seat3]]), inverse).ravel()).astype(int)
    xg, yg = np.round(cv2.perspectiveTransform(np.array([[gap]]), inverse).ravel()).astype(int)
    assert np.abs(check[y3 + 30, x3].astype(int) - empty[y3 + 30, x3]).sum() > 30
    assert np.abs(check[yg, xg].astype(int) - empty[yg, xg]).sum() == 0
    r = runner.invoke(
        app,
        [*_recognise(d, "table.json"), "--json", str(d / "round.png")],
    )
    assert r.exit_code == 0, r.output
    cards = json.loads(r.stdout)["images"][0]["cards"]
    assert sorted((c["card"], c["zone"]) for c in cards) == sorted(DEALT)


def test_corners_started_from_another_corner_are_warned_of(walk: dict[str, Any]) -> None:
    tl, tr, br, bl = walk["corners"]
    r = _table(walk, _corners([tr, br, bl, tl]))
    assert r.exit_code == 0, r.output  # right for a layout drawn from the other side
    assert "warning: the corner given as TL is the cloth's TR in the image" in r.stdout
    assert f"--corners '{_corners([tl, tr, br, bl])}'" in r.stdout


def test_a_corner_just_out_of_the_frame_is_taken_with_a_warning(walk: dict[str, Any]) -> None:
    tl, tr, br, bl = walk["corners"]
    r = _table(walk, _corners([(-40, tl[1]), tr, br, bl]))  # estimated off the frame
    assert r.exit_code == 0, r.output
    assert f"warning: corner TL (-40,{tl[1]}) is outside the 1920x1080 image" in r.stdout


@pytest.mark.parametrize(
    ("order", "said"),
    [
        ((0, 3, 2, 1), "go anticlockwise in the image"),  # mirrored: TL, BL, BR, TR
        ((0, 1, 3, 2), "cross over"),  # a bow tie: TL, TR, BL, BR
        ((1, 0, 2, 3), "cross over"),
    ],
)
def test_a_corner_order_no_camera_sees_is_refused(
    walk: dict[str, Any], order: tuple[int, ...], said: str
) -> None:
    points = [walk["corners"][i] for i in order]
    r = _table(walk, _corners(points))
    assert r.exit_code == 2 and said in r.stderr, r.output
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output


def test_the_mirrored_order_is_refused_with_the_order_to_give(walk: dict[str, Any]) -> None:
    tl, tr, br, bl = walk["corners"]
    right = f"clockwise from the top-left they are --corners '{_corners([tl, tr, br, bl])}'"
    for mirrored in ([tl, bl, br, tr], [br, tr, tl, bl], [tr, tl, bl, br]):
        r = _table(walk, _corners(mirrored))
        assert r.exit_code == 2 and right in r.stderr, r.output


@pytest.mark.parametrize(
    ("corners", "said"),
    [
        ("134,49;2500,45;1805,1023;122,1021", "corner TR (2500,45) lies outside the 1920x1080"),
        ("-400,49;1782,45;1805,1023;122,1021", "corner TL (-400,49) lies outside"),
        ("134,49;1782,45;1805,1023", "3 point(s); give the cloth's four corners"),
    ],
)
def test_corners_off_the_image_or_too_few_are_refused(
    walk: dict[str, Any], corners: str, said: str
) -> None:
    r = _table(walk, corners)
    assert r.exit_code == 2 and said in r.stderr, r.output


def _edit(layout: dict[str, Any], change: str) -> None:
    zones = layout["zones"]
    if change == "key":
        layout["zone"] = layout.pop("zones")
    elif change == "zone key":
        zones[0]["polygone"] = zones[0].pop("polygon")
    elif change == "off cloth":
        zones[1]["polygon"][0] = [1500.0, 300.0]
    elif change == "name":
        zones[1]["name"] = "Seat 5"
    elif change == "two points":
        zones[1]["polygon"] = zones[1]["polygon"][:2]
    elif change == "cm":
        layout["units"] = "cm"
    elif change == "size in cm":
        layout["size"] = [120, 70]
    elif change == "twice":
        zones[2]["name"] = zones[1]["name"]
    elif change == "no card":
        layout["card_size"] = [0, 0]
    elif change == "card":
        layout["card_size"] = [-63, 88]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("key", "unknown key 'zone' (did you mean 'zones'?) in the layout"),
        ("zone key", "unknown key 'polygone' (did you mean 'polygon'?) in zone 'dealer'"),
        ("off cloth", "zone 'seat:5' has the point (1500, 300) off the cloth (1200 x 700 mm"),
        ("name", "zone name 'Seat 5'; zones are named dealer, seat:N"),
        ("two points", "zone 'seat:5' needs at least 3 points"),
        ("cm", "units 'cm'; a layout is in millimetres"),
        ("size in cm", "zone 'dealer' has the point (450, 20) off the cloth (120 x 70 mm"),
        ("twice", "zone 'seat:5' is declared twice"),
        # Before: fitted, then a ZeroDivisionError traceback (exit 1), nothing written.
        ("no card", "card_size 0 x 0 mm; both must be positive"),
        ("card", "card_size -63 x 88 mm; both must be positive"),
    ],
)
def test_a_mistaken_layout_is_refused_with_what_to_change(
    walk: dict[str, Any], tmp_path: Path, change: str, said: str
) -> None:
    layout = json.loads((walk["dir"] / "layout.json").read_text())
    _edit(layout, change)
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(layout))
    r = _table(walk, _corners(walk["corners"]), path)
    assert r.exit_code == 2 and f"error: {path}: invalid layout: " in r.stderr, r.output
    assert said in r.stderr and "Traceback" not in r.output


def test_a_layout_given_for_a_table_calibration_says_to_fit_it(walk: dict[str, Any]) -> None:
    d = walk["dir"]
    r = runner.invoke(
        app,
        [*_recognise(d, "layout.json"), str(d / "round.png")],
    )
    assert r.exit_code == 2 and "fit it to the camera first" in r.stderr, r.output


def test_photographs_of_another_size_than_the_calibration_are_counted_as_such(
    walk: dict[str, Any], tmp_path: Path
) -> None:
    d = walk["dir"]
    assert _table(walk, _corners(walk["corners"])).exit_code == 0
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(d / "round.png")), (1280, 720)))
    bad = tmp_path / "cut.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not the rest")
    r = runner.invoke(
        app,
        [*_recognise(d, "table.json"), str(d / "round.png"), str(small), str(bad)],
    )
    assert r.exit_code == 2
    assert r.stdout.count("confidence") == len(DEALT)
    assert "error: 1 of 3 image(s) could not be read" in r.stderr  # the cut one only
    assert (
        "error: 1 of 3 image(s) not read for their size (1280x720): the table calibration "
        in r.stderr
    )
    assert "was fitted on 1920x1080 photographs" in r.stderr


def test_a_gif_is_read_from_a_folder_as_when_named(walk: dict[str, Any], tmp_path: Path) -> None:
    d = walk["dir"]
    photos = tmp_path / "photos"
    photos.mkdir()
    rgb = cv2.cvtColor(cv2.imread(str(d / "round.png")), cv2.COLOR_BGR2RGB)
    PILImage.fromarray(rgb).save(photos / "round.gif")
    named = runner.invoke(
        app, ["recognise", "--deck", str(d / "deck.json"), str(photos / "round.gif")]
    )
    folder = runner.invoke(app, ["recognise", "--deck", str(d / "deck.json"), str(photos)])
    assert named.exit_code == 0 and folder.exit_code == 0, folder.output
    assert folder.stdout == named.stdout  # the same cards, the same file name
    assert "round.gif: " in folder.stdout and folder.stdout.count("confidence") >= 1


def test_corners_read_off_a_half_size_copy_are_warned_of(
    walk: dict[str, Any], tmp_path: Path
) -> None:
    """Corners read off a half-size preview fit a calibration whose cards are twice their
    size on the layout: every card was refused, and the report said "no card on the frame"
    (the frame shows eight)."""
    d = walk["dir"]

    def table(corners: list[tuple[int, int]]) -> Any:
        args = ["calibrate", "table", "--image", str(d / "round.png")]
        args += ["--layout", str(d / "layout.json"), "--corners", _corners(corners)]
        return runner.invoke(app, [*args, "--out", str(tmp_path / "t.json")])

    r = table([(x // 2, y // 2) for x, y in walk["corners"]])
    assert r.exit_code == 0, r.output
    assert "0 of them the size of a card on the layout as calibrated" in r.stdout
    assert "were the corners read off a resized copy of the frame?" in r.stdout
    assert "give them in the 1920x1080 frame's own pixels" in r.stdout
    r = table(walk["corners"])
    assert r.exit_code == 0 and "resized copy" not in r.stdout, r.stdout
