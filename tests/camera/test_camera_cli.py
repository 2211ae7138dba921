"""``studio calibrate deck|table|check`` and ``studio recognise`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner, Result

from calibration.deck_profile import DeckProfile
from calibration.table import default_layout
from hwsim.camera.render import render_example_photo, render_scene, standing_camera
from hwsim.camera.virtual import VirtualCamera, camera_setup
from studio.cli import app

runner = CliRunner()


def _calibrate_deck(examples: Path, out: Path, *options: str) -> Result:
    """``studio calibrate deck --examples EXAMPLES --out OUT [options]``."""
    return runner.invoke(
        app, ["calibrate", "deck", "--examples", str(examples), "--out", str(out), *options]
    )


def _calibrate_table(image: Path, out: Path, *options: str) -> Result:
    """``studio calibrate table --image IMAGE --out OUT [options]``."""
    return runner.invoke(
        app, ["calibrate", "table", "--image", str(image), "--out", str(out), *options]
    )


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("frames")
    cam = VirtualCamera(level="medium", seed=31)
    cv2.imwrite(str(d / "empty.png"), cam.read())
    for code, zone in [("QH", "seat:2"), ("TS", "seat:2"), ("7D", "dealer"), ("AC", "seat:5:h2")]:
        cam.place(code, zone)
    cv2.imwrite(str(d / "round.png"), cam.read())
    return {"empty": d / "empty.png", "round": d / "round.png", "dir": d}


def test_a_table_fitted_with_another_clothes_layout_is_warned_of(tmp_path: Path) -> None:
    # QA: a frame of `hwsim run --camera` (the wide layout) fitted without --layout took
    # the 7-seat default silently, and every card went to a wrong box.
    layout, slots, size = camera_setup(7)
    cam = VirtualCamera(level="medium", seed=5, layout=layout, slots=slots, size=size)
    frame = tmp_path / "wide.png"
    cv2.imwrite(str(frame), cam.read())
    r = _calibrate_table(frame, tmp_path / "t.json")
    assert r.exit_code == 0, r.output
    assert "layout: 980 x 551 mm, 7 seats (the default: --layout gives another cloth)" in r.output
    assert "warning: the markers fit the layout only to 5." in r.output, r.output
    cam.calibration().save(tmp_path / "truth.json")  # a table file serves as --layout
    r = _calibrate_table(frame, tmp_path / "t.json", "--layout", str(tmp_path / "truth.json"))
    assert r.exit_code == 0, r.output
    assert f"layout: 1280 x 740 mm, 7 seats ({tmp_path / 'truth.json'})" in r.output
    assert "warning" not in r.output, r.output


def test_deck_table_recognise(examples_dir: Path, frames: dict[str, Path], tmp_path: Path) -> None:
    deck, table, check = tmp_path / "deck.json", tmp_path / "table.json", tmp_path / "check.png"
    r = _calibrate_deck(examples_dir, deck)
    assert r.exit_code == 0, r.output
    assert "16 used, 0 rejected" in r.output and "recognisable cards: 52 of 52" in r.output
    # The subset's 13 spades teach every number card's pip arrangement; 7H, QD, 3C the suits.
    assert "pip arrangements (rank:pips): 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 A:1 T:10" in r.output
    assert "body pip suits: S H D C" in r.output
    # Our faces' court cards are a letter in a frame, not a picture.
    assert "court pictures: not used" in r.output
    r = _calibrate_table(frames["empty"], table, "--check", str(check))
    assert r.exit_code == 0, r.output
    assert "aruco" in r.output and check.stat().st_size > 0
    assert ", overhead" in r.output and "warning" not in r.output, r.output
    assert "focus: no card on the frame to measure" in r.output
    assert "deck profiles read cards from 53 x 74 px" in r.output
    r = runner.invoke(
        app,
        ["recognise", "--deck", str(deck), "--table", str(table), "--json", str(frames["round"])],
    )
    assert r.exit_code == 0, r.output
    cards = json.loads(r.output)["images"][0]["cards"]
    assert sorted((c["card"], c["zone"]) for c in cards) == [
        ("7D", "dealer"),
        ("AC", "seat:5:h2"),
        ("QH", "seat:2"),
        ("TS", "seat:2"),
    ]
    assert all(0.5 <= c["confidence"] <= 1 for c in cards)
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(frames["round"])])
    assert r.exit_code == 0 and r.output.count("confidence") == 4
    r = runner.invoke(
        app,
        [
            "calibrate",
            "check",
            "--table",
            str(table),
            "--image",
            str(frames["round"]),
            "--out",
            str(tmp_path / "c2.png"),
        ],
    )
    assert r.exit_code == 0 and (tmp_path / "c2.png").exists()


def test_errors_exit_non_zero_with_one_line(tmp_path: Path, frames: dict[str, Path]) -> None:
    r = runner.invoke(
        app, ["recognise", "--deck", str(tmp_path / "none.json"), str(frames["round"])]
    )
    assert r.exit_code == 2 and "error:" in r.output and "not found" in r.output
    r = _calibrate_deck(tmp_path / "nodir", tmp_path / "d.json")
    assert r.exit_code == 2 and "error:" in r.output
    bad = tmp_path / "ex"
    bad.mkdir()
    cv2.imwrite(str(bad / "QH.png"), cv2.imread(str(frames["empty"])))
    r = _calibrate_deck(bad, tmp_path / "d.json")
    assert r.exit_code == 2 and "error:" in r.output
    r = _calibrate_table(tmp_path / "none.png", tmp_path / "t.json")
    assert r.exit_code == 2 and "not found" in r.output
    r = _calibrate_table(frames["empty"], tmp_path / "t.json", "--corners", "1,2;3")
    assert r.exit_code == 2 and "corners" in r.output


def test_partial_deck_needs_allow_partial(tmp_path: Path) -> None:
    from hwsim.camera.dataset import write_examples

    d = tmp_path / "few"
    write_examples(d, ["AS", "2S", "KH"], seed=4)
    r = _calibrate_deck(d, tmp_path / "p.json")
    assert r.exit_code == 2 and "no example for" in r.output
    r = _calibrate_deck(d, tmp_path / "p.json", "--allow-partial")
    assert r.exit_code == 0 and "warning" in r.output and "recognisable cards: 6 of 52" in r.output


def test_recognise_divides_out_a_photographs_warm_light(
    profile: DeckProfile, tmp_path: Path
) -> None:
    """A photograph under an indoor lamp (red 1.4 times blue): without the balance the
    orange paper is not found at all."""
    deck = tmp_path / "deck.json"
    profile.save(deck)
    photo = render_example_photo("KD", np.random.default_rng(12)).astype(np.float32)
    warm = np.clip(photo * np.array([0.75, 0.9, 1.05], np.float32), 0, 255).astype(np.uint8)
    cv2.imwrite(str(tmp_path / "warm.png"), warm)
    r = runner.invoke(app, ["recognise", "--deck", str(deck), "--json", str(tmp_path / "warm.png")])
    assert r.exit_code == 0, r.output
    assert [c["card"] for c in json.loads(r.output)["images"][0]["cards"]] == ["KD"]


def test_calibrate_table_reports_an_angled_or_distant_camera(tmp_path: Path) -> None:
    """A photograph taken standing at the table, at 640x360: the view is at an angle, and
    the far cards are too small to read — said before any card is dealt."""
    size = (640, 360)
    layout = default_layout()
    scene = render_scene(
        np.random.default_rng(3), "easy", [], size=size, camera=standing_camera(size, layout)
    )
    cv2.imwrite(str(tmp_path / "table.png"), scene.frame)
    r = _calibrate_table(tmp_path / "table.png", tmp_path / "t.json")
    assert r.exit_code == 0, r.output
    assert "at an angle" in r.output
    assert "warning: cards there are too small to read" in r.output


def test_calibrate_table_reports_a_camera_out_of_focus(
    frames: dict[str, Path], tmp_path: Path, profile: DeckProfile
) -> None:
    """Cards on the calibration frame tell how sharp the camera is; out of focus, every
    card would be refused by its index, so the operator is told before the first round."""
    sharp, blurred = tmp_path / "sharp.png", tmp_path / "blurred.png"
    frame = cv2.imread(str(frames["round"]))
    cv2.imwrite(str(sharp), frame)
    cv2.imwrite(str(blurred), cv2.GaussianBlur(frame, (0, 0), 2.5))
    outputs = []
    for image in (sharp, blurred):
        r = _calibrate_table(image, tmp_path / "t.json")
        assert r.exit_code == 0, r.output
        outputs.append(r.output)
    assert "focus: 4 card(s) measured" in outputs[0] and "warning" not in outputs[0]
    assert "focus: 4 card(s) measured" in outputs[1]
    assert "warning: 4 card(s) too blurred to read by their index" in outputs[1]
    # `studio recognise` says what to do about them, once per image.
    deck = tmp_path / "deck.json"
    profile.save(deck)
    r = runner.invoke(
        app, ["recognise", "--deck", str(deck), "--table", str(tmp_path / "t.json"), str(blurred)]
    )
    assert r.exit_code == 0, r.output
    assert r.output.count("out of focus: edges blurred") == 4
    assert "note: 4 card(s) too blurred to read by their index" in r.output
