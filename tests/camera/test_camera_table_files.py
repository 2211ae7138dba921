"""Table files and images the camera tools are given by mistake, and cards outside every zone.

Found by a review of the overhead-camera runtime:

* a ``--table`` or ``--layout`` that is not UTF-8 text (a photograph) ended in a
  ``UnicodeDecodeError`` traceback, where the deck profile's loader said ``not JSON``;
* a table file that is JSON but no calibration (``"layout": null``, an all-zero
  homography) ended ``studio camera run`` in a ``TypeError`` or numpy's ``LinAlgError``;
* a card far outside every zone (76 mm from the dealer box, at the cloth's corner: a
  dropped or burnt card, one by the shoe) was published as placed in the nearest zone;
* an image was decoded whole before its size was looked at (a 12000 x 12000 PNG of a few
  hundred kilobytes took a gigabyte).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from service_support import ServiceOutputs
from typer.testing import CliRunner

from calibration import deck_profile, image_file
from calibration.deck_profile import DeckProfile, learn_profile, load_examples
from calibration.image_file import read_image
from calibration.recogniser import Recogniser
from calibration.table import Layout, TableCalibration, default_layout, load_layout
from drivers.camera.service import CameraService
from hwsim.camera.virtual import VirtualCamera
from studio.cli import app
from studio.errors import VisionError

runner = CliRunner()
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def _table(tmp_path: Path, **changes: Any) -> Path:
    data = VirtualCamera(level="easy", seed=15).calibration().to_dict()
    data.update(changes)
    path = tmp_path / "table.json"
    path.write_text(json.dumps(data))
    return path


# ------------------------------------------------------------------ files not UTF-8


def test_a_table_or_layout_that_is_not_text_is_not_json(tmp_path: Path) -> None:
    photo = tmp_path / "round.png"
    photo.write_bytes(PNG)
    with pytest.raises(VisionError, match=f"cannot read table calibration {photo}: not JSON"):
        TableCalibration.load(photo)
    with pytest.raises(VisionError, match=f"cannot read layout {photo}: not JSON"):
        load_layout(photo)
    with pytest.raises(VisionError, match="is a directory, not a file"):
        TableCalibration.load(tmp_path)
    with pytest.raises(VisionError, match="is a directory, not a file"):
        load_layout(tmp_path)


def test_the_commands_say_a_photograph_given_as_the_table_or_layout_is_not_json(
    tmp_path: Path, deck_profile: DeckProfile
) -> None:
    frame = tmp_path / "frame.png"
    assert cv2.imwrite(str(frame), VirtualCamera(level="easy", seed=1).read())
    deck = tmp_path / "deck.json"
    deck_profile.save(deck)
    out = str(tmp_path / "t.json")
    commands = [
        ["recognise", "--deck", str(deck), "--table", str(frame), str(frame)],
        ["calibrate", "table", "--image", str(frame), "--layout", str(frame), "--out", out],
    ]
    for args in commands:
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert r.stderr.startswith("error: cannot read ") and "not JSON" in r.stderr, r.stderr


# ------------------------------------------------------------- JSON, not a calibration


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"layout": None}, "a layout is a JSON object with size and zones, not None"),
        ({"layout": "default"}, "a layout is a JSON object with size and zones, not 'default'"),
        ({"homography_image_to_layout": [[0.0] * 3] * 3}, "the homography is singular"),
        ({"homography_image_to_layout": [[1, 2, 3], [2, 4, 6], [0, 0, 1]]}, "singular"),
        ({"image_size": [-5, 0]}, "image_size [-5, 0]"),
        ({"image_size": [1280, 720, 3]}, "image_size [1280, 720, 3]"),
        ({"residual_mm": "small"}, "invalid table calibration"),
        ({"markers_used": [None]}, "invalid table calibration"),
    ],
)
def test_a_table_file_that_is_no_calibration_is_refused_in_words(
    tmp_path: Path, changes: dict[str, Any], said: str
) -> None:
    with pytest.raises(VisionError, match="invalid") as caught:
        TableCalibration.load(_table(tmp_path, **changes))
    assert said in str(caught.value)


def test_a_table_file_without_its_layout_is_refused_in_words(tmp_path: Path) -> None:
    path = _table(tmp_path)
    data = json.loads(path.read_text())
    del data["layout"]
    path.write_text(json.dumps(data))
    with pytest.raises(VisionError, match="no 'layout'"):
        TableCalibration.load(path)


def test_a_layout_that_is_no_object_is_refused_in_words() -> None:
    for data in (None, [], "dealer", 3):
        with pytest.raises(VisionError, match="a layout is a JSON object"):
            Layout.from_dict(data)  # type: ignore[arg-type]


def test_camera_run_refuses_such_a_table_file_with_the_reason(
    tmp_path: Path, deck_profile: DeckProfile
) -> None:
    deck_profile.save(tmp_path / "deck.json")
    for changes, said in (
        ({"layout": None}, "a layout is a JSON object"),
        ({"homography_image_to_layout": [[0.0] * 3] * 3}, "the homography is singular"),
    ):
        _table(tmp_path, **changes)
        config = tmp_path / "studio.toml"
        config.write_text(
            '[broker]\nurl = "mqtt://127.0.0.1:1883"\n[[tables]]\nid = "bj-1"\n'
            '[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
            'options = { source = "0", deck = "deck.json", table = "table.json" }\n'
        )
        r = runner.invoke(
            app, ["camera", "run", "--config", str(config), "--state-dir", str(tmp_path / "s")]
        )
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert r.stderr.startswith("error: tables[0].devices[0].options.table: "), r.stderr
        assert said in r.stderr


# ------------------------------------------------------------- cards outside every zone


def test_a_point_far_outside_every_zone_is_in_none() -> None:
    lay = default_layout()
    # Half a 63 x 88 mm card's diagonal: a card farther out has no corner over the zone.
    assert lay.margin_mm == pytest.approx(54.113, abs=0.001)
    zone, dist = lay.zone_at(100.0, 60.0)  # a card turned sideways whose end lies in the box
    assert zone == "dealer" and dist == pytest.approx(36.0)
    assert lay.zone_at(490.0, 70.0) == ("dealer", 0.0)
    zone, dist = lay.zone_at(864.0, 60.0)  # 20 mm right of the dealer box
    assert zone == "dealer" and dist == pytest.approx(20.0)
    zone, dist = lay.zone_at(60.0, 60.0)  # the cloth's top-left corner: 76 mm from it
    assert zone is None and dist == pytest.approx(76.0)
    assert lay.attribute(60.0, 60.0) == ("dealer", pytest.approx(76.0))  # the nearest, still


def test_the_zone_margin_is_the_layouts_to_set(tmp_path: Path) -> None:
    data = default_layout().to_dict()
    assert "zone_margin_mm" not in data  # the default, written as before
    data["zone_margin_mm"] = 80
    (tmp_path / "layout.json").write_text(json.dumps(data))
    lay = load_layout(tmp_path / "layout.json")
    assert lay.margin_mm == 80.0 and lay.zone_at(60.0, 60.0)[0] == "dealer"
    assert lay.to_dict()["zone_margin_mm"] == 80.0
    data["zone_margin_mm"] = 0
    assert Layout.from_dict(data).zone_at(864.0, 60.0)[0] is None
    for bad in (-1, "wide", float("nan"), 10_000):
        data["zone_margin_mm"] = bad
        with pytest.raises(VisionError, match="invalid layout"):
            Layout.from_dict(data)
    cal = VirtualCamera(level="easy", seed=15).calibration()
    corner = cal.to_image(np.array([[60.0, 60.0]]))[0]
    zone, dist = cal.zone_of((float(corner[0]), float(corner[1])))
    assert zone is None and dist == pytest.approx(76.0, abs=0.5)


class _Frames:
    """A finite source of the frames given."""

    name = "frames"
    live = False

    def __init__(self, frames: list[np.ndarray]) -> None:
        self.frames = list(frames)

    def open(self) -> None:
        pass

    def read(self) -> np.ndarray | None:
        return self.frames.pop(0) if self.frames else None

    def close(self) -> None:
        pass


async def test_a_card_far_outside_every_zone_is_no_sighting(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=3)
    cam.place("QH", "seat:3")
    near = cam.place("7S", "dealer")
    far = cam.place("AS", "dealer")
    near.centre = (864.0, 60.0)  # over the dealer box's edge: 20 mm outside it
    far.centre = (60.0, 60.0)  # by the shoe, 76 mm from the dealer box
    cam._changed()
    out = ServiceOutputs()
    service = CameraService(
        _Frames([cam.read() for _ in range(10)]),
        Recogniser(profile, cam.calibration()),
        out.publish,
        device="cam-1",
        settle_frames=3,
    )
    await service.run()
    assert sorted((c.zone, c.event) for c in out.cards) == [
        ("dealer", "placed"),
        ("seat:3", "placed"),
    ]
    assert service.outside_zones == 1


# ------------------------------------------------------------------ images too big


def test_an_image_of_too_many_pixels_is_refused_before_it_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = 7100  # 50.4 megapixels
    big = tmp_path / "big.png"
    assert cv2.imwrite(str(big), np.zeros((side, side), np.uint8))

    def decoded(data: bytes) -> None:
        raise AssertionError("decoded before its size was checked")

    monkeypatch.setattr(image_file, "decode_image", decoded)
    with pytest.raises(VisionError, match=f"{big} is {side} x {side} pixels: more than the 50"):
        read_image(big)


def test_an_image_within_the_limit_is_read(tmp_path: Path) -> None:
    small = tmp_path / "small.jpg"
    assert cv2.imwrite(str(small), np.full((3024, 4032, 3), 128, np.uint8))
    assert read_image(small).shape == (3024, 4032, 3)
    unknown = tmp_path / "frame.pgm"  # a format Pillow may not size: OpenCV decodes it
    assert cv2.imwrite(str(unknown), np.full((48, 64), 200, np.uint8))
    assert read_image(unknown).shape == (48, 64, 3)


def test_a_deck_example_of_too_many_pixels_is_rejected_before_it_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    side = 7100
    assert cv2.imwrite(str(examples / "QH.png"), np.zeros((side, side), np.uint8))

    def decoded(data: bytes) -> None:
        raise AssertionError("decoded before its size was checked")

    monkeypatch.setattr(deck_profile, "decode_image", decoded)
    with pytest.raises(VisionError):  # no usable example: nothing to learn
        learn_profile(load_examples(examples))
    files = load_examples(examples)
    assert [(name, img.size) for name, img in files] == [("QH.png", 0)]
    assert "QH.png is 7100 x 7100 pixels: more than the 50 megapixels" in files.unreadable["QH.png"]
