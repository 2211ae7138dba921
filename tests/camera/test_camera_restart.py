"""A camera restarted while cards lie on the layout does not publish them again.

The controller pairs every camera ``placed`` with a shoe card in the same zone: a
second ``placed`` of a card already confirmed is "a card the shoe never scanned", a
``misscan`` alert that pauses the round. The camera's state file keeps, with its seq,
the cards it has published and not yet seen leave; a restart takes them as published.
"""

from __future__ import annotations

import asyncio
import logging
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from service_support import ServiceOutputs, camera_base

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import CameraService
from drivers.camera.sources import VirtualCameraSource
from drivers.state import StateFile
from hwsim.camera.virtual import VirtualCamera
from studio.contract.messages import CameraCard


def _run(
    cam: VirtualCamera,
    profile: DeckProfile,
    state: StateFile,
    out: ServiceOutputs,
    *,
    frames: int,
    until: int | None = None,
) -> None:
    """A camera service from ``state`` on ``cam`` for ``frames`` frames (or ``until``
    messages in all, then ``frames`` more), then stopped, as a process restart does."""

    async def scenario() -> None:
        service = CameraService(
            VirtualCameraSource(cam),
            Recogniser(profile, cam.calibration()),
            out.publish,
            device="cam-1",
            settle_frames=3,
            remove_frames=4,
            state=state,
        )
        task = asyncio.create_task(service.run())
        if until is not None:
            while len(out.cards) < until:
                await asyncio.sleep(0.01)
        start = service.frames
        while service.frames < start + frames:
            await asyncio.sleep(0.01)
        service.stop()
        await task

    asyncio.run(asyncio.wait_for(scenario(), 60))


def _seen(got: list[CameraCard]) -> list[tuple[int, str, str | None, str]]:
    """(seq relative to the first run's base, event, card, zone) of each message."""
    base = camera_base(got) if got else 0
    return [(m.seq - base, m.event, m.card, m.zone) for m in got]


def _seqs(got: list[CameraCard]) -> list[int]:
    return [seq for seq, *_ in _seen(got)]


def _two_cards_published(
    profile: DeckProfile, tmp_path: Path
) -> tuple[VirtualCamera, StateFile, ServiceOutputs]:
    """A camera run that published KS on seat 6 and 3H on the dealer's spot, then stopped."""
    cam = VirtualCamera(level="easy", seed=12)
    state = StateFile(tmp_path / "cam.json")
    cam.place("KS", "seat:6")
    cam.place("3H", "dealer")
    out = ServiceOutputs()
    _run(cam, profile, state, out, frames=2, until=2)
    return cam, state, out


def test_a_restart_does_not_publish_the_cards_lying_on_the_layout_again(
    profile: DeckProfile, tmp_path: Path
) -> None:
    cam, state, out = _two_cards_published(profile, tmp_path)
    assert sorted(_seen(out.cards)[i][1:] for i in range(2)) == [
        ("placed", "3H", "dealer"),
        ("placed", "KS", "seat:6"),
    ]
    _run(cam, profile, state, out, frames=15)  # restarted: the same two cards lie there
    assert len(out.cards) == 2, _seen(out.cards)
    cam.clear()
    _run(cam, profile, state, out, frames=2, until=4)  # restarted again; then cleared
    assert _seqs(out.cards) == [1, 2, 3, 4]
    assert sorted(_seen(out.cards)[i][1:] for i in range(2, 4)) == [
        ("removed", "3H", "dealer"),
        ("removed", "KS", "seat:6"),
    ]
    assert out.cards[2].confidence > 0.5 and out.cards[2].method == "index"


def test_cards_taken_away_or_dealt_while_the_camera_was_down_are_published_after_it(
    profile: DeckProfile, tmp_path: Path
) -> None:
    cam, state, out = _two_cards_published(profile, tmp_path)
    cam.remove("3H")  # while no camera runs
    cam.place("7C", "seat:2")
    _run(cam, profile, state, out, frames=15, until=4)
    assert _seqs(out.cards) == [1, 2, 3, 4]
    assert sorted(_seen(out.cards)[i][1:] for i in range(2, 4)) == [
        ("placed", "7C", "seat:2"),
        ("removed", "3H", "dealer"),
    ]
    assert len(out.cards) == 4  # KS, still there, is not published again


def test_a_card_exchanged_in_its_place_while_the_camera_was_down_is_published(
    profile: DeckProfile, tmp_path: Path
) -> None:
    """Taken as published, a restored card is still read again when it settles: another
    card in its place is a removal and a placement, not the old card still lying there."""
    cam = VirtualCamera(level="easy", seed=12)
    state = StateFile(tmp_path / "cam.json")
    cam.place("KS", "seat:6")
    out = ServiceOutputs()
    _run(cam, profile, state, out, frames=2, until=1)
    old = cam.cards[0].centre
    cam.remove("KS")
    cam.place("7C", "seat:6")  # the same slot
    new = cam.cards[0].centre
    assert math.hypot(new[0] - old[0], new[1] - old[1]) < 30  # mm: well within the old track
    _run(cam, profile, state, out, frames=15, until=3)
    assert _seen(out.cards) == [
        (1, "placed", "KS", "seat:6"),
        (2, "removed", "KS", "seat:6"),
        (3, "placed", "7C", "seat:6"),
    ]


def test_a_state_file_that_cannot_be_written_does_not_stop_the_camera(
    profile: DeckProfile, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A full disk (here: the state folder is a file) stopped the camera, and with it every
    camera of ``studio camera run``: the error is logged, the health says so, and the
    cards are still published."""
    (tmp_path / "state").write_text("not a folder")
    cam = VirtualCamera(level="easy", seed=12)
    cam.place("KS", "seat:6")
    out = ServiceOutputs()

    async def scenario() -> None:
        service = CameraService(
            VirtualCameraSource(cam),
            Recogniser(profile, cam.calibration()),
            out.publish,
            device="cam-1",
            settle_frames=3,
            remove_frames=4,
            state=StateFile(tmp_path / "state" / "cam.json"),
            on_health=out.report,
        )
        task = asyncio.create_task(service.run())
        while len(out.cards) < 1 and not task.done():
            await asyncio.sleep(0.01)
        cam.clear()
        while len(out.cards) < 2 and not task.done():
            await asyncio.sleep(0.01)
        service.stop()
        await task

    with caplog.at_level(logging.ERROR, logger="drivers.camera.service"):
        asyncio.run(asyncio.wait_for(scenario(), 60))
    # The state folder is unreadable: the camera starts as one whose state was lost.
    assert [seen[:3] for seen in _seen(out.cards)] == [
        (1, "placed", "KS"),
        (2, "removed", "KS"),
    ]
    # "ok" once frames flow (test_camera_health_ok.py), then the first save failed.
    assert out.statuses == ["ok", "degraded"]
    assert "could not save the camera state" in out.health[1][1]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "could not save the camera state" in errors[0], errors


class _Blurred:
    """A camera out of focus: the virtual camera's frames under a Gaussian blur."""

    def __init__(self, camera: VirtualCamera, sigma: float) -> None:
        self.camera, self.sigma = camera, sigma

    def read(self) -> np.ndarray:
        return np.asarray(cv2.GaussianBlur(self.camera.read(), (0, 0), self.sigma), np.uint8)


def test_a_camera_degraded_before_a_restart_says_ok_when_it_reads_a_card_after_it(
    profile: DeckProfile, tmp_path: Path
) -> None:
    """The controller keeps a device's last health: a camera restarted (refocused) after
    five unreadable cards started its count at 0 and never said "ok" again."""
    cam = VirtualCamera(level="easy", seed=12)
    blurred = _Blurred(cam, 3.0)
    state = StateFile(tmp_path / "cam.json")
    out = ServiceOutputs()

    async def run(until: int) -> None:
        service = CameraService(
            VirtualCameraSource(blurred),
            Recogniser(profile, cam.calibration()),
            out.publish,
            device="cam-1",
            state=state,
            on_health=out.report,
        )
        task = asyncio.create_task(service.run())
        while len(out.cards) < until:
            await asyncio.sleep(0.01)
        service.stop()
        await task

    for code, zone in [("KS", "seat:1"), ("3H", "seat:2"), ("9C", "seat:3"), ("QD", "seat:4")]:
        cam.place(code, zone)
    cam.place("5S", "dealer")
    asyncio.run(asyncio.wait_for(run(5), 60))
    assert [m.card for m in out.cards] == [None] * 5 and out.statuses == ["ok", "degraded"]
    blurred.sigma = 0.01  # refocused, and restarted
    cam.place("7H", "seat:5")
    asyncio.run(asyncio.wait_for(run(6), 60))
    assert out.cards[5].card == "7H"
    # Restarted degraded: no "ok" on frames alone, the card read says it.
    assert out.statuses == ["ok", "degraded", "ok"]
