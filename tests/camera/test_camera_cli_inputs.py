"""The camera commands given what people actually hand them: photographs named as a phone
or a file manager names them, folders with other things in them, every format a camera or
an editor saves, and paths that are wrong. Each is used, or refused with a reason, never
with a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image as PILImage
from pillow_heif import register_heif_opener
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile, example_code, learn_profile, load_examples
from calibration.image_file import read_image
from hwsim.camera.dataset import SUBSET
from hwsim.camera.render import render_example_photo
from hwsim.camera.virtual import VirtualCamera
from studio.cli import app
from studio.errors import VisionError

runner = CliRunner()
ORIENTATION = 0x0112  # the EXIF tag


def _rgb(bgr: np.ndarray) -> PILImage.Image:
    return PILImage.fromarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))


def _deck(*args: str) -> list[str]:
    return ["calibrate", "deck", *args]


@pytest.fixture(scope="module")
def photos() -> dict[str, np.ndarray]:
    """One photograph of each card of the issue's subset (13 spades, 7H, QD, 3C)."""
    rng = np.random.default_rng(5)
    return {code: render_example_photo(code, rng) for code in SUBSET}


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("QH.jpg", "QH"),
        ("10H.jpg", "TH"),
        ("qh.JPG", "QH"),
        ("Qh.png", "QH"),
        ("QH (1).jpg", "QH"),
        ("QH(1).jpg", "QH"),
        ("QH_2.jpeg", "QH"),
        ("QH-back.png", "QH"),
        ("Q♥.jpg", "QH"),
        ("Q♥\ufe0f.jpg", "QH"),  # the emoji heart a phone's keyboard types
        ("10♣.png", "TC"),
        ("a♠.png", "AS"),
        ("K♢.png", "KD"),
    ],
)
def test_example_file_names_as_people_write_them(name: str, code: str) -> None:
    assert example_code(Path(name)) == code


@pytest.mark.parametrize("name", ["queen_of_hearts.jpg", "IMG_0413.jpg", "Q.jpg", "QX.png"])
def test_a_name_that_is_no_card_says_how_to_name_it(name: str) -> None:
    with pytest.raises(VisionError, match=r"name it by rank and suit, like QH\.jpg"):
        example_code(Path(name))


def test_a_folder_of_a_phones_names_is_refused_in_one_short_line(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    for i, code in enumerate(SUBSET):
        cv2.imwrite(str(tmp_path / f"IMG_{i + 1:04d}.jpg"), photos[code])
    r = runner.invoke(app, _deck("--examples", str(tmp_path), "--out", str(tmp_path / "d.json")))
    assert r.exit_code == 2, r.output
    assert r.stderr == (
        "reading examples (16)...\n"
        "error: no usable example: 16 examples, IMG_0001.jpg, IMG_0002.jpg, IMG_0003.jpg and "
        "13 more: file name is not a card code: name it by rank and suit, like QH.jpg or "
        "10H.png\n"
    )


def test_a_messy_examples_folder_teaches_all_52(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """The subset as a person copies it off a phone: names in every spelling, a second
    photograph of a card, a cut-short copy, a Mac's hidden files, a note and a folder."""
    ex = tmp_path / "examples"
    ex.mkdir()
    names = {
        "TS": "10S.jpg",
        "QS": "qs.JPG",
        "KS": "KS (1).jpg",
        "JS": "JS_2.jpeg",
        "7H": "7h.png",
        "QD": "Q♦.jpg",
        "3C": "3♣\ufe0f.png",
    }
    for code, img in photos.items():
        cv2.imwrite(str(ex / names.get(code, f"{code}.png")), img)
    cv2.imwrite(str(ex / "AS (2).png"), render_example_photo("AS", np.random.default_rng(6)))
    cv2.imwrite(str(ex / "queen_of_hearts.jpg"), photos["QD"])
    whole = (ex / "qs.JPG").read_bytes()
    (ex / "QS copy.jpg").write_bytes(whole[: len(whole) // 3])
    (ex / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1" + bytes(100))
    (ex / "._qs.JPG").write_bytes(b"\x00\x05\x16\x07" + bytes(60))  # AppleDouble
    (ex / "notes.txt").write_text("deck bought 3 Dec")
    (ex / "old").mkdir()
    out = tmp_path / "deck.json"
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(out)))
    assert r.exit_code == 0, r.output
    assert "examples: 19 files, 17 used, 2 rejected" in r.output
    assert "rejected queen_of_hearts.jpg: file name is not a card code: name it" in r.output
    assert "rejected QS copy.jpg: not a readable image (cut short" in r.output
    assert "skipped notes.txt: not an image file" in r.output
    assert "skipped old/: a folder" in r.output
    assert "skipped 2 hidden file(s)" in r.output
    assert "AS: 2 examples, all learned from (AS (2).png, AS.png)" in r.output
    # 10S.jpg is TS: it used to be reported as read back wrong.
    assert "self-check: 17/17 examples read back correctly" in r.output
    assert "recognisable cards: 52 of 52" in r.output
    # Progress, a line per stage (stderr is not a terminal here).
    assert "reading examples (19)..." in r.stderr
    assert "reading the examples back (17)..." in r.stderr
    assert "reading examples" not in r.stdout
    # Cards of suits it saw one example of read as well.
    rng = np.random.default_rng(9)
    unseen = tmp_path / "unseen"
    unseen.mkdir()
    for code in ("KH", "2D", "TC", "9H"):
        cv2.imwrite(str(unseen / f"{code}.png"), render_example_photo(code, rng))
    r = runner.invoke(app, ["recognise", "--deck", str(out), "--json", str(unseen)])
    assert r.exit_code == 0, r.output
    read = {
        Path(i["image"]).stem: [c["card"] for c in i["cards"]]
        for i in json.loads(r.stdout)["images"]
    }
    assert read == {"2D": ["2D"], "9H": ["9H"], "KH": ["KH"], "TC": ["TC"]}


def test_photographs_in_every_format_a_camera_or_editor_saves(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """16-bit and transparent PNG, greyscale and CMYK JPEG, WebP, HEIC, TIFF, BMP and a
    phone's 4032x3024 JPEG stored sideways with EXIF orientation 6."""
    register_heif_opener()
    ex = tmp_path / "examples"
    ex.mkdir()
    kinds = ["png16", "alpha", "grey", "cmyk", "phone", "webp", "heic", "tiff", "bmp"]
    for i, (code, img) in enumerate(photos.items()):
        kind = kinds[i % len(kinds)]
        if kind == "png16":
            cv2.imwrite(str(ex / f"{code}.png"), img.astype(np.uint16) * 257)
        elif kind == "alpha":
            cv2.imwrite(str(ex / f"{code}.png"), np.dstack([img, np.full(img.shape[:2], 255)]))
        elif kind == "grey":
            cv2.imwrite(str(ex / f"{code}.jpg"), cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
        elif kind == "cmyk":
            _rgb(img).convert("CMYK").save(ex / f"{code}.jpg", quality=95)
        elif kind == "phone":
            big = cv2.resize(img, (4032, 3024), interpolation=cv2.INTER_CUBIC)
            exif = PILImage.Exif()
            exif[ORIENTATION] = 6  # the sensor's image, to be turned clockwise to view
            _rgb(cv2.rotate(big, cv2.ROTATE_90_COUNTERCLOCKWISE)).save(
                ex / f"{code}.jpg", quality=92, exif=exif.tobytes()
            )
            assert read_image(ex / f"{code}.jpg").shape[:2] == (3024, 4032)
        elif kind in ("webp", "heic"):
            _rgb(img).save(ex / f"{code}.{kind}", quality=95)
        else:
            cv2.imwrite(str(ex / f"{code}.{kind}"), img)
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(tmp_path / "d.json")))
    assert r.exit_code == 0, r.output
    assert "16 files, 16 used, 0 rejected" in r.output
    assert "self-check: 16/16" in r.output and "recognisable cards: 52 of 52" in r.output


def test_examples_are_decoded_one_at_a_time(photos: dict[str, np.ndarray], tmp_path: Path) -> None:
    """Loading names the files; each is decoded when learning reaches it, so 52 phone
    photographs (36 MB each decoded) are not all held at once."""
    for code in ("AS", "2S"):
        cv2.imwrite(str(tmp_path / f"{code}.png"), photos[code])
    examples = load_examples(tmp_path)
    assert len(examples) == 2
    (tmp_path / "2S.png").write_bytes(b"cut")  # after loading, before it is read
    (first, cut_short), (second, whole) = iter(examples)
    assert (first, second) == ("2S.png", "AS.png")
    assert cut_short.size == 0 and whole.shape == photos["AS"].shape


def test_an_examples_path_that_is_wrong_says_what_is_there(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    out = ["--out", str(tmp_path / "d.json")]
    (tmp_path / "empty").mkdir()
    cases = {
        "empty": "no images (jpg, jpeg, png",
        "missing": "examples directory",
        "AS.png": "is a file, not a directory",
        "phone": "its folder",
    }
    cv2.imwrite(str(tmp_path / "AS.png"), photos["AS"])
    # The folder copied off a phone, its photographs one level down.
    (tmp_path / "phone" / "DCIM").mkdir(parents=True)
    cv2.imwrite(str(tmp_path / "phone" / "DCIM" / "AS.png"), photos["AS"])
    for name, said in cases.items():
        r = runner.invoke(app, _deck("--examples", str(tmp_path / name), *out))
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert r.stderr.startswith("error: ") and said in r.stderr, (name, r.output)
    r = runner.invoke(app, _deck("--examples", str(tmp_path / "phone"), *out))
    assert f"its folder {tmp_path / 'phone' / 'DCIM'} has images: give that folder" in r.stderr


def test_an_out_that_cannot_be_written_is_refused_before_any_work(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    ex = tmp_path / "ex"
    ex.mkdir()
    cv2.imwrite(str(ex / "AS.png"), photos["AS"])
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), VirtualCamera(level="easy", seed=3).read())
    nowhere = tmp_path / "no" / "such"
    commands = [
        _deck("--examples", str(ex), "--out", str(nowhere / "deck.json")),
        _deck("--examples", str(ex), "--out", str(ex)),
        ["calibrate", "table", "--image", str(frame), "--out", str(nowhere / "t.json")],
        [
            "calibrate",
            "table",
            "--image",
            str(frame),
            "--out",
            str(tmp_path / "t.json"),
            "--check",
            str(nowhere / "check.png"),
        ],
    ]
    for args in commands:
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert r.stderr.startswith("error: cannot write "), r.output
        assert "reading examples" not in r.output and "method:" not in r.output
    assert not (tmp_path / "t.json").exists()  # not half done: nothing written
    r = runner.invoke(app, commands[0])
    assert f"directory {nowhere} does not exist" in r.stderr
    r = runner.invoke(app, commands[1])
    assert "it is a directory" in r.stderr


def test_an_out_on_a_read_only_file_system_is_refused_even_as_root(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """Root passes every permission check (these tests run as root), so the file is tried:
    sysfs lets no one create a file."""
    out = Path("/sys/studio-deck.json")
    if not Path("/sys/kernel").is_dir():
        pytest.skip("no sysfs here")
    cv2.imwrite(str(tmp_path / "AS.png"), photos["AS"])
    r = runner.invoke(app, _deck("--examples", str(tmp_path), "--out", str(out), "--allow-partial"))
    assert r.exit_code == 2, r.output  # 1 with a traceback, after learning
    assert r.stderr == f"error: cannot write {out}: Permission denied\n"
    assert not out.exists()


def test_a_zone_check_named_as_no_image_format_is_refused_before_any_work(
    tmp_path: Path,
) -> None:
    """cv2.imwrite raised cv2.error, a traceback, for a name it has no writer for, and
    only after the table calibration was written."""
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), VirtualCamera(level="easy", seed=3).read())
    table = tmp_path / "t.json"
    for check in ("check", "check.heic"):
        r = runner.invoke(
            app,
            [
                "calibrate",
                "table",
                "--image",
                str(frame),
                "--out",
                str(table),
                "--check",
                str(tmp_path / check),
            ],
        )
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert f"name it {tmp_path / 'check.png'}" in r.stderr
        assert not table.exists()
    r = runner.invoke(app, ["calibrate", "table", "--image", str(frame), "--out", str(table)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app,
        [
            "calibrate",
            "check",
            "--table",
            str(table),
            "--image",
            str(frame),
            "--out",
            str(tmp_path / "zones"),
        ],
    )
    assert r.exit_code == 2 and "a file with no suffix is not a format written here" in r.stderr


def test_recognise_says_what_is_wrong_with_a_deck_or_an_image_argument(
    deck_profile: DeckProfile, tmp_path: Path
) -> None:
    deck = tmp_path / "deck.json"
    deck_profile.save(deck)
    frame = tmp_path / "frame.png"
    cam = VirtualCamera(level="easy", seed=3)
    cam.place("QH", "dealer")
    cv2.imwrite(str(frame), cam.read())
    # A pattern the shell matched to nothing comes as it is; the other images are read.
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(frame), str(tmp_path / "*.jpg")])
    assert r.exit_code == 2 and r.stdout.count("confidence") == 1
    assert f"error: no file matches {tmp_path / '*.jpg'}" in r.stderr
    # A folder of folders.
    (tmp_path / "days" / "day1").mkdir(parents=True)
    cv2.imwrite(str(tmp_path / "days" / "day1" / "a.png"), cam.read())
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(tmp_path / "days")])
    assert r.exit_code == 2 and "give that folder instead" in r.stderr
    # Decks that are not one this studio reads.
    table_json = tmp_path / "table.json"
    table_json.write_text(json.dumps({"format": "studio-table-calibration", "version": 1}))
    older = json.loads(deck.read_text())
    older["version"] = 0
    (tmp_path / "older.json").write_text(json.dumps(older))
    older["version"], older["rank_size"] = 1, [16, 24]
    (tmp_path / "sizes.json").write_text(json.dumps(older))
    (tmp_path / "photo.json").write_bytes(b"\x89PNG\r\n\x1a\n")
    cases = {
        table_json: f"deck profile {table_json}: a table calibration, not a deck profile: "
        "give it as --table",
        tmp_path / "older.json": "written as version 0, this studio reads version 1: "
        "learn the deck again (studio calibrate deck)",
        tmp_path / "sizes.json": "learn the deck again",
        tmp_path / "photo.json": "not JSON",
        tmp_path: "is a directory, not a file",
    }
    for path, said in cases.items():
        r = runner.invoke(app, ["recognise", "--deck", str(path), str(frame)])
        assert r.exit_code == 2, r.output  # 1 with a traceback
        assert r.stderr.startswith("error: ") and said in r.stderr, (path, r.stderr)


def test_on_a_terminal_progress_is_one_line_cleared_before_the_report(
    monkeypatch: pytest.MonkeyPatch, photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """Counted example by example on one line, rewritten in place; the line is cleared
    before the report or an error, which would otherwise be printed after it."""
    monkeypatch.setattr("calibration.cli._stderr_is_terminal", lambda: True)
    cv2.imwrite(str(tmp_path / "queen_of_hearts.jpg"), photos["QD"])
    r = runner.invoke(app, _deck("--examples", str(tmp_path), "--out", str(tmp_path / "d.json")))
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("\rreading examples 1/1...\x1b[K")
    assert "\r\x1b[Kerror: no usable example: queen_of_hearts.jpg" in r.stderr


def _write_photos(ex: Path, photos: dict[str, np.ndarray]) -> None:
    ex.mkdir()
    for code, img in photos.items():
        cv2.imwrite(str(ex / f"{code}.jpg"), img)


def test_a_greyscale_example_of_a_red_card_is_rejected(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """A heart photographed in greyscale was learned as black ink ("H +0.00"), the profile
    written with "52 of 52" recognisable, and then every heart was unreadable."""
    ex = tmp_path / "examples"
    _write_photos(ex, photos)
    grey = cv2.cvtColor(photos["7H"], cv2.COLOR_BGR2GRAY)
    cv2.imwrite(str(ex / "7H.jpg"), cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR))
    out = tmp_path / "d.json"
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(out)))
    assert r.exit_code == 2, r.output
    assert "rejected 7H.jpg: no colour in the photograph" in r.output
    assert "no example for H" in r.output
    assert not out.exists()


def test_a_suit_learned_in_the_other_colour_is_an_error(photos: dict[str, np.ndarray]) -> None:
    """Spades taught only by a red card's photograph (misnamed) would rule every spade out."""
    examples = [("7H.jpg", photos["7H"]), ("QD.jpg", photos["QD"]), ("3C.jpg", photos["3C"])]
    with pytest.raises(VisionError, match=r"ink learned in the wrong colour \(S \+0\.\d\d"):
        learn_profile([*examples, ("5S.jpg", photos["7H"])])


def test_an_example_read_back_as_another_card_stops_the_profile(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """An 8 of spades saved as a king: "read back as 8S" used to be printed, and the profile
    written anyway with "recognisable cards: 52 of 52" (exit 0)."""
    ex = tmp_path / "examples"
    _write_photos(ex, photos)
    cv2.imwrite(str(ex / "KS (2).jpg"), photos["8S"])
    out = tmp_path / "d.json"
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(out)))
    assert r.exit_code == 2, r.output
    assert "KS (2).jpg: read back as 8S" in r.output
    assert "read back as another card (KS (2).jpg as 8S)" in r.output
    assert "--allow-mismatch" in r.output
    assert not out.exists()
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(out), "--allow-mismatch"))
    assert r.exit_code == 0, r.output
    assert "warning: 1 example(s) read back as another card" in r.output
    assert "recognisable cards: 51 of 52" in r.output
    assert out.exists()


def test_a_green_or_magenta_cast_is_divided_out_and_named(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """A cast off the blue-orange axis (a phone's wrong white balance) was left alone:
    no card found in the frame, exit 0 and not a word why."""
    profile, _ = learn_profile([(f"{c}.jpg", p) for c, p in photos.items()])
    deck = tmp_path / "deck.json"
    profile.save(deck)
    for name, gains in (("magenta", (1.0, 0.7, 1.0)), ("green", (0.7, 1.0, 0.7))):
        tinted = np.clip(photos["7H"] * np.array(gains, np.float32), 0, 255).astype(np.uint8)
        cv2.imwrite(str(tmp_path / f"{name}.png"), tinted)
        r = runner.invoke(
            app, ["recognise", "--deck", str(deck), "--json", str(tmp_path / f"{name}.png")]
        )
        assert r.exit_code == 0, r.output
        assert f"a {name} colour cast" in r.stderr and "divided out" in r.stderr
        (image,) = json.loads(r.stdout)["images"]
        assert [c["card"] for c in image["cards"]] == ["7H"]
    blank = tmp_path / "cloth.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), (60, 110, 40), np.uint8))
    r = runner.invoke(app, ["recognise", "--deck", str(deck), str(blank)])
    assert r.exit_code == 0 and f"warning: {blank}: no card found" in r.stderr


def test_examples_under_a_green_cast_are_balanced_and_named(tmp_path: Path) -> None:
    """Examples photographed on a white desk under a green light (its paper 1.35 times
    greener than red and blue) were not learned: the card was not found, "no corner index
    found" on every one. Each is now balanced on its card's paper, and said so."""
    ex = tmp_path / "examples"
    ex.mkdir()
    gains = np.array((1 / 1.35, 1.0, 1 / 1.35), np.float32)
    rng = np.random.default_rng(5)
    photos = {c: render_example_photo(c, rng, surface=(240, 242, 244)) for c in SUBSET}
    for code, photo in photos.items():
        tinted = np.clip(photo * gains, 0, 255).astype(np.uint8)
        cv2.imwrite(str(ex / f"{code}.png"), tinted)
    out = tmp_path / "d.json"
    r = runner.invoke(app, _deck("--examples", str(ex), "--out", str(out)))
    assert r.exit_code == 0, r.output
    assert f"{len(photos)} used, 0 rejected" in r.output
    assert r.output.count(": a green colour cast (1.3") == len(photos)
    assert "balanced 7H.png: a green colour cast" in r.output
    assert f"warning: {len(photos)} example(s) under a green or magenta colour cast" in r.output
    assert f"self-check: {len(photos)}/{len(photos)} examples read back correctly" in r.output
    r = runner.invoke(app, ["recognise", "--deck", str(out), "--json", str(ex / "QD.png")])
    assert r.exit_code == 0, r.output
    (image,) = json.loads(r.stdout)["images"]
    assert [c["card"] for c in image["cards"]] == ["QD"]


def test_corners_of_a_sideways_stored_photograph_name_its_orientation(
    photos: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """A phone's photograph stored sideways (EXIF orientation 6) is read upright; corners
    read off its stored pixels were refused with no word of the turn."""
    big = cv2.resize(photos["7H"], (1600, 1200), interpolation=cv2.INTER_CUBIC)
    exif = PILImage.Exif()
    exif[ORIENTATION] = 6
    path = tmp_path / "IMG_0412.jpg"
    _rgb(cv2.rotate(big, cv2.ROTATE_90_COUNTERCLOCKWISE)).save(path, exif=exif.tobytes())
    args = ["calibrate", "table", "--image", str(path), "--out", str(tmp_path / "t.json")]
    r = runner.invoke(app, [*args, "--corners", "100,1500;100,100;1100,100;1100,1500"])
    assert r.exit_code == 2
    assert "lies outside the 1600x1200 image" in r.stderr
    assert "EXIF orientation 6: its pixels as stored are 1200x1600, turned upright 1600x1200" in (
        r.stderr
    )


def test_an_empty_file_is_called_empty(tmp_path: Path) -> None:
    """A 0-byte file (a copy that never finished) was "not a readable image"."""
    (tmp_path / "7H.jpg").write_bytes(b"")
    r = runner.invoke(app, ["recognise", "--barcodes", str(tmp_path / "7H.jpg")])
    assert r.exit_code == 2
    assert f"error: {tmp_path / '7H.jpg'} is an empty file (0 bytes)" in r.stderr
    (tmp_path / "QD.jpg").write_bytes(b"")
    with pytest.raises(VisionError):  # no usable example
        learn_profile(load_examples(tmp_path))
    files = load_examples(tmp_path)
    list(files)
    assert files.unreadable == {
        "7H.jpg": "an empty file (0 bytes)",
        "QD.jpg": "an empty file (0 bytes)",
    }
