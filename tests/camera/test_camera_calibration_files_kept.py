"""The calibration tools lose no file (a CLI bad-input sweep, F5 and F12).

``studio calibrate deck|table --out EXISTING`` wrote the file in place: a write that failed
half way (a full disk; a file-size limit stands in for one here) left a file cut short
where the calibration in use was, and the camera refused it at its next start. The file
is now written beside it and renamed over it. And an ``--out``/``--check`` naming an input
(the frame, the layout, the table calibration, an example photograph) overwrote it without
a word: it is refused now, before any work.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.deck_profile import DeckProfile
from hwsim.camera.render import render_example_photo
from hwsim.camera.virtual import VirtualCamera
from studio.atomic_file import replace_file
from studio.cli import app

runner = CliRunner()


@contextlib.contextmanager
def _file_size_limit(size: int) -> Iterator[None]:
    """Writes past ``size`` bytes fail with EFBIG (``ulimit -f``), as on a full disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error, not a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def _table_save(path: Path) -> None:
    VirtualCamera(level="easy", seed=16).calibration().save(path)


@pytest.mark.parametrize("kind", ["table", "deck"])
def test_a_failed_write_keeps_the_calibration_in_use(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    in_use = tmp_path / f"{kind}.json"
    save: Callable[[Path], None]
    if kind == "table":
        VirtualCamera(level="easy", seed=15).calibration().save(in_use)
        save = _table_save
    else:
        profile: DeckProfile = request.getfixturevalue("deck_profile")
        in_use.write_text('{"format": "studio-deck-profile", "the one": "in use"}\n')
        save = profile.save
    before = in_use.read_bytes()
    with _file_size_limit(2048), pytest.raises(OSError) as failed:  # the new file is larger
        save(in_use)
    assert failed.value.errno == errno.EFBIG
    assert in_use.read_bytes() == before  # was cut at 2048 bytes: the old one gone
    assert [p.name for p in tmp_path.iterdir()] == [in_use.name]  # no temporary file left
    save(in_use)  # and without the limit, replaced
    save(tmp_path / "fresh.json")
    assert in_use.read_bytes() == (tmp_path / "fresh.json").read_bytes() != before


def test_a_replaced_file_keeps_its_mode_and_its_link(tmp_path: Path) -> None:
    real = tmp_path / "calibrations" / "table.json"
    real.parent.mkdir()
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "table.json"
    link.symlink_to(real)
    replace_file(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["table.json"]


@pytest.fixture
def frame(tmp_path: Path) -> Path:
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), VirtualCamera(level="easy", seed=3).read())
    return path


def _refused(args: list[str], kept: Path, said: str) -> None:
    before = kept.read_bytes()
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert r.stderr == f"error: {said}\n", r.stderr
    assert kept.read_bytes() == before


def test_a_table_calibration_is_not_written_over_its_inputs(frame: Path, tmp_path: Path) -> None:
    layout = tmp_path / "cloth.json"
    layout.write_text(json.dumps(VirtualCamera(level="easy", seed=3).layout.to_dict()))
    table = ["calibrate", "table", "--image", str(frame)]
    _refused(
        [*table, "--layout", str(layout), "--out", str(layout)],
        layout,
        f"--out {layout} is the --layout: writing it would destroy it; name another file",
    )
    (tmp_path / "sub").mkdir()
    check = tmp_path / "sub" / ".." / frame.name
    _refused(
        [*table, "--out", str(tmp_path / "t.json"), "--check", str(check)],
        frame,
        f"--check {check} is the --image ({frame}): writing it would destroy it; name another file",
    )
    _refused(
        [*table, "--out", str(frame)],
        frame,
        f"--out {frame} is the --image: writing it would destroy it; name another file",
    )
    assert not (tmp_path / "t.json").exists()
    # A JSON file named as an image is no image either: refused, not an image's name.
    _refused(
        [*table, "--out", str(tmp_path / "t.png")],
        frame,
        f"cannot write {tmp_path / 't.png'}: a table calibration is JSON, not a .png image; "
        f"name it {tmp_path / 't.json'}",
    )
    assert not (tmp_path / "t.png").exists()


def test_a_zone_check_is_not_written_over_its_frame_or_table(frame: Path, tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    VirtualCamera(level="easy", seed=3).calibration().save(table)
    linked = tmp_path / "same-frame.png"
    os.link(frame, linked)  # another name, the same file
    check = ["calibrate", "check", "--table", str(table), "--image", str(frame), "--out"]
    _refused(
        [*check, str(linked)],
        frame,
        f"--out {linked} is the --image ({frame}): writing it would destroy it; name another file",
    )


def test_a_deck_profile_is_not_written_over_an_example(tmp_path: Path) -> None:
    examples = tmp_path / "ex"
    examples.mkdir()
    cv2.imwrite(str(examples / "QS.png"), render_example_photo("QS", np.random.default_rng(5)))
    deck = ["calibrate", "deck", "--examples", str(examples), "--allow-partial", "--out"]
    _refused(
        [*deck, str(examples / "QS.png")],
        examples / "QS.png",
        f"--out {examples / 'QS.png'} is the example QS.png of --examples: writing it would "
        "destroy it; name another file",
    )
    _refused(
        [*deck, str(examples / "deck.png")],
        examples / "QS.png",
        f"cannot write {examples / 'deck.png'}: a deck profile is JSON, not a .png image; "
        f"name it {examples / 'deck.json'}",
    )
    assert sorted(p.name for p in examples.iterdir()) == ["QS.png"]
