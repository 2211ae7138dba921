"""The test run's cache of rendered frames (``HWSIM_SCENE_CACHE``, set by tests/conftest.py)
hands back the very frames a render gives: read whole, in part (a stream longer than the one
cached goes on from its last frame), with wear's own random stream, and never another
stream's frames. A profile learned once for the run (``accuracy_support.learned_once``)
reads frames as the one learned in the test does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from accuracy_support import learned_once

from calibration.deck_profile import DeckProfile, LearnReport, learn_profile
from calibration.recogniser import Recogniser
from hwsim.camera.dataset import (
    SCENE_CACHE_ENV,
    SUBSET,
    example_images,
    scenes,
    score_level,
    true_calibration,
)
from hwsim.camera.render import TABLE_STYLE, Scene
from hwsim.camera.wear import Wear

SMALL = (640, 360)
WORN = Wear(curl_mm=4.0, sheen=1.0)


def rendered(
    monkeypatch: pytest.MonkeyPatch, folder: Path | None, n: int, **kw: object
) -> list[Scene]:
    if folder is None:
        monkeypatch.delenv(SCENE_CACHE_ENV, raising=False)
    else:
        monkeypatch.setenv(SCENE_CACHE_ENV, str(folder))
    return list(scenes("hard", n, seed=8100, size=SMALL, **kw))  # type: ignore[arg-type]


def assert_same(a: list[Scene], b: list[Scene]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.frame, y.frame)
        assert np.array_equal(x.homography, y.homography)
        assert x.level == y.level
        assert [
            (c.code, c.zone, c.centre, c.angle, c.serial, c.occluder, c.face_down) for c in x.cards
        ] == [
            (c.code, c.zone, c.centre, c.angle, c.serial, c.occluder, c.face_down) for c in y.cards
        ]
        for c, d in zip(x.cards, y.cards, strict=True):
            assert np.array_equal(c.image_quad, d.image_quad)


@pytest.mark.parametrize("wear", [None, WORN], ids=["plain", "worn"])
def test_cached_frames_are_the_rendered_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wear: Wear | None
) -> None:
    uncached = rendered(monkeypatch, None, 4, wear=wear)
    first = rendered(monkeypatch, tmp_path, 2, wear=wear)  # renders and stores 2
    assert len(list(tmp_path.glob("*.pickle"))) == 2
    again = rendered(monkeypatch, tmp_path, 4, wear=wear)  # reads 2, renders 2 more
    assert len(list(tmp_path.glob("*.pickle"))) == 4
    read = rendered(monkeypatch, tmp_path, 4, wear=wear)  # reads all 4
    assert_same(first, uncached[:2])
    assert_same(again, uncached)
    assert_same(read, uncached)


def test_another_stream_is_not_read_from_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rendered(monkeypatch, tmp_path, 1)
    rendered(monkeypatch, tmp_path, 1, wear=WORN)
    rendered(monkeypatch, tmp_path, 1, barcode=True)
    assert len(list(tmp_path.glob("*.pickle"))) == 3
    worn = rendered(monkeypatch, tmp_path, 1, wear=WORN)
    assert_same(worn, rendered(monkeypatch, None, 1, wear=WORN))
    assert not np.array_equal(worn[0].frame, rendered(monkeypatch, tmp_path, 1)[0].frame)


def test_a_profile_learned_once_for_the_run_reads_as_one_learned_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    learned: list[int] = []

    def learn() -> tuple[DeckProfile, LearnReport]:
        learned.append(1)
        return learn_profile(example_images(SUBSET, seed=1, style=TABLE_STYLE))

    monkeypatch.setenv(SCENE_CACHE_ENV, str(tmp_path))
    here, _ = learned_once(("test", 1), learn)
    kept, report = learned_once(("test", 1), learn)
    assert len(learned) == 1 and report.complete
    assert kept is not here  # read back, not this process's object
    monkeypatch.delenv(SCENE_CACHE_ENV)
    a = score_level(here, "hard", 2, seed=8200)
    b = score_level(kept, "hard", 2, seed=8200)
    assert a.total == 24
    assert (a.summary(), a.misreads, a.methods) == (b.summary(), b.misreads, b.methods)
    # Card by card, confidences and all.
    (scene,) = scenes("hard", 1, seed=8200)
    read = [
        [f.to_dict() for f in Recogniser(p, true_calibration(scene)).recognise(scene.frame)]
        for p in (here, kept)
    ]
    assert read[0] and read[0] == read[1]


def test_a_cache_that_cannot_be_written_renders_all_the_same(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Only a saving: a full disk (the folder holds up to ~2 GB) must not fail a test. A
    # folder under a file cannot be written to, as a full one.
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert_same(rendered(monkeypatch, blocked / "cache", 3), rendered(monkeypatch, None, 3))
    assert not list(tmp_path.glob("**/*.part"))
