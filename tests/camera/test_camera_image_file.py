"""Image files: a phone's HEIC and AVIF photographs read like JPEG and PNG, and a bad file
among many is reported without losing the others."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image as PILImage
from pillow_heif import register_heif_opener
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile
from calibration.image_file import read_image
from drivers.camera.sources import ImageDirectorySource
from hwsim.camera.dataset import SUBSET
from hwsim.camera.virtual import VirtualCamera
from studio.cli import app
from studio.errors import VisionError

runner = CliRunner()
ORIENTATION = 0x0112  # the EXIF tag
HEVC = (".heic", ".heif")  # pillow-heif's x265 files


def _save(bgr: np.ndarray, path: Path, *, orientation: int = 1) -> Path:
    """Save as the suffix says, through Pillow (HEIC by pillow-heif), at high quality."""
    register_heif_opener()
    im = PILImage.fromarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    exif = PILImage.Exif()
    exif[ORIENTATION] = orientation
    # x265's default preset took 1.2 s an image (about 30 s of the suite's CPU); the
    # fastest writes the same kind of file, which is what these tests read.
    fast = {"enc_params": {"preset": "ultrafast"}} if path.suffix.lower() in HEVC else {}
    im.save(path, quality=95, exif=exif.tobytes(), **fast)
    return path


@pytest.fixture(scope="module")
def round_frame() -> np.ndarray:
    cam = VirtualCamera(level="medium", seed=31)
    for code, zone in [("QH", "seat:2"), ("TS", "seat:2"), ("7D", "dealer"), ("AC", "seat:5:h2")]:
        cam.place(code, zone)
    return np.asarray(cam.read(), np.uint8)


@pytest.mark.parametrize("suffix", [".heic", ".heif", ".avif", ".HEIC"])
def test_a_phones_formats_decode_like_the_original(
    round_frame: np.ndarray, tmp_path: Path, suffix: str
) -> None:
    path = _save(round_frame, tmp_path / f"frame{suffix}")
    img = read_image(path)
    assert img.shape == round_frame.shape and img.dtype == np.uint8
    # Lossy, but the same picture in the same channel order (BGR, as OpenCV's).
    diff = np.abs(img.astype(np.int16) - round_frame.astype(np.int16))
    assert float(diff.mean()) < 4.0, float(diff.mean())
    assert np.abs(img.mean(axis=(0, 1)) - round_frame.mean(axis=(0, 1))).max() < 3.0


def test_a_heic_photograph_is_turned_upright(tmp_path: Path) -> None:
    # A phone held upright stores its sensor's landscape image with orientation 6 (turn
    # 90° clockwise to view); the viewer, and the reader, must see it upright.
    landscape = np.zeros((60, 100, 3), np.uint8)
    landscape[:, :20] = (0, 0, 255)  # a red band on the sensor's left
    img = read_image(_save(landscape, tmp_path / "upright.heic", orientation=6))
    assert img.shape[:2] == (100, 60)
    # Turned clockwise, the sensor's left edge is the top.
    assert img[:15, :, 2].mean() > 200 and img[-15:, :, 2].mean() < 50


def test_unreadable_files_say_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "broken.heic").write_bytes(b"\x00\x00\x00\x18ftypheic" + b"\x00" * 64)
    (tmp_path / "empty.jpg").write_bytes(b"")
    with pytest.raises(VisionError, match=r"is not a readable image .*heic"):
        read_image(tmp_path / "broken.heic")
    with pytest.raises(VisionError, match=r"empty.jpg is an empty file \(0 bytes\)"):
        read_image(tmp_path / "empty.jpg")
    with pytest.raises(VisionError, match="not found"):
        read_image(tmp_path / "missing.png")
    with pytest.raises(VisionError, match="is a directory"):
        read_image(tmp_path)


def test_recognise_reads_every_image_of_a_directory_and_reports_a_bad_one(
    deck_profile: DeckProfile, round_frame: np.ndarray, tmp_path: Path
) -> None:
    deck = tmp_path / "deck.json"
    deck_profile.save(deck)
    photos = tmp_path / "photos"
    photos.mkdir()
    _save(round_frame, photos / "a_phone.heic")
    cv2.imwrite(str(photos / "b_camera.png"), round_frame)
    (photos / "c_cut_short.jpg").write_bytes(b"\xff\xd8\xff\xe0 not the rest")
    (photos / "notes.txt").write_text("not an image, not read")
    r = runner.invoke(app, ["recognise", "--deck", str(deck), "--json", str(photos)])
    assert r.exit_code == 2
    images = json.loads(r.stdout)["images"]
    assert [Path(i["image"]).name for i in images] == [
        "a_phone.heic",
        "b_camera.png",
        "c_cut_short.jpg",
    ]
    for image in images[:2]:
        assert sorted(c["card"] for c in image["cards"]) == ["7D", "AC", "QH", "TS"]
    assert "is not a readable image" in images[2]["error"] and images[2]["cards"] == []
    assert "1 of 3 image(s) could not be read" in r.stderr
    # Plain text: the cards of the images read, then the error, on stderr.
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(photos)])
    assert r.exit_code == 2
    assert r.stdout.count("confidence") == 8 and "c_cut_short.jpg" in r.stderr
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(tmp_path / "deck_only")])
    assert r.exit_code == 2 and "not found" in r.stderr


def test_a_deck_is_learned_from_heic_photographs(examples_dir: Path, tmp_path: Path) -> None:
    heic = tmp_path / "heic"
    heic.mkdir()
    for p in sorted(examples_dir.iterdir()):
        _save(cv2.imread(str(p)), heic / f"{p.stem}.heic")
    assert len(list(heic.iterdir())) == len(SUBSET)
    r = runner.invoke(
        app, ["calibrate", "deck", "--examples", str(heic), "--out", str(tmp_path / "d.json")]
    )
    assert r.exit_code == 0, r.output
    assert "16 used, 0 rejected" in r.output and "recognisable cards: 52 of 52" in r.output


def test_the_image_folder_camera_reads_heic(round_frame: np.ndarray, tmp_path: Path) -> None:
    _save(round_frame, tmp_path / "frame.heic")
    source = ImageDirectorySource(tmp_path)
    source.open()
    frame = source.read()
    assert frame is not None and frame.shape == round_frame.shape
    assert source.read() is None
