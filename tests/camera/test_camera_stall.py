"""A stalled stream (its read blocks instead of returning nothing) is noticed by a deadline.

Offline was only noticed when ``read()`` returned None ``drop_after`` times in a row: a
stalled RTSP/HTTP stream or a hung USB camera blocks in ``read()`` instead, and the camera
stayed "online", publishing nothing, for ever (and could not be stopped).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time

import numpy as np
import pytest
from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import CameraService
from drivers.camera.sources import Image, VideoCaptureSource
from hwsim.camera.virtual import VirtualCamera
from studio.backoff import Backoff
from studio.errors import VisionError


class _StallingSource:
    """A live source of the virtual camera whose reads block while ``stalled`` is set,
    until ``release`` is (as a stalled stream's read does: no None, no error)."""

    def __init__(self, camera: VirtualCamera) -> None:
        self.camera = camera
        self.name = "stalling"
        self.live = True
        self.stalled = threading.Event()
        self.release = threading.Event()
        self.blocked = 0  # reads blocked right now
        self.opens = 0
        self.closes = 0
        self.closed_while_blocked = 0

    def open(self) -> None:
        self.opens += 1

    def read(self) -> Image | None:
        if self.stalled.is_set():
            self.blocked += 1
            try:
                self.release.wait()
            finally:
                self.blocked -= 1
            return None
        return np.asarray(self.camera.read(), np.uint8)

    def close(self) -> None:
        self.closes += 1
        if self.blocked:
            self.closed_while_blocked += 1


def _service(
    source: _StallingSource,
    profile: DeckProfile,
    out: ServiceOutputs,
    *,
    frame_timeout: float,
) -> CameraService:
    return CameraService(
        source,
        Recogniser(profile, source.camera.calibration()),
        out.publish,
        device="cam-1",
        settle_frames=3,
        remove_frames=4,
        backoff=Backoff(initial=0.01, maximum=0.02, rng=random.Random(1)),
        on_availability=out.announce,
        frame_timeout=frame_timeout,
    )


async def _until(condition: object, seconds: float = 20.0) -> None:
    assert callable(condition)
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)


def test_a_stalled_stream_goes_offline_and_is_reopened(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    cam.place("KS", "seat:6")
    source = _StallingSource(cam)
    out = ServiceOutputs()
    # 2 s: with 0.3 s an ordinary frame on a loaded CI machine was taken for a stall too.
    service = _service(source, profile, out, frame_timeout=2.0)
    shown = 0

    async def scenario() -> None:
        nonlocal shown
        task = asyncio.create_task(service.run())
        try:
            await _until(lambda: len(out.cards) == 1 and service.online)
            # Counted from the stall (not from the start: see the timeout above).
            shown, stalls, reconnects = len(out.availability), service.stalls, service.reconnects
            source.stalled.set()  # the stream goes quiet: the next read never returns
            await _until(lambda: out.availability[-1:] == [False])
            assert service.stalls == stalls + 1 and service.reconnects >= reconnects + 1
            assert source.blocked == 1  # given up, still blocked; closed without waiting
            source.stalled.clear()
            # The stalled read returns (OpenCV's read timeout): the next session, which waited
            # for it rather than read beside it, opens the stream again and reads it.
            source.release.set()
            frames = service.frames
            await _until(lambda: service.frames > frames + 3)
            assert out.availability[-1] is True
            service.stop()
            await asyncio.wait_for(task, 5)
        finally:
            service.stop()
            source.release.set()

    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert out.availability[shown - 1 : shown + 2] == [True, False, True]
    assert source.opens == source.closes >= 2
    # The stalled session's close came while its read was still blocked, not waiting for it.
    assert source.closed_while_blocked == 1
    assert [(m.event, m.card) for m in out.cards] == [("placed", "KS")]  # not published again


def test_a_camera_stopped_during_a_stalled_read_stops_at_once(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    source = _StallingSource(cam)
    service = _service(source, profile, ServiceOutputs(), frame_timeout=60.0)

    async def scenario() -> float:
        task = asyncio.create_task(service.run())
        try:
            await _until(lambda: service.frames >= 2)
            source.stalled.set()
            await _until(lambda: source.blocked == 1)
            started = time.monotonic()
            service.stop()
            await asyncio.wait_for(task, 5)
            return time.monotonic() - started
        finally:
            service.stop()
            source.release.set()

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) < 5
    assert service.stalls == 0 and service.reconnects == 0


def test_the_frame_deadline_must_be_positive(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    with pytest.raises(VisionError, match="frame_timeout"):
        _service(_StallingSource(cam), profile, ServiceOutputs(), frame_timeout=0.0)


class _HungCapture:
    """Stands in for a cv2.VideoCapture whose read() hangs until ``release_read`` is set."""

    def __init__(self) -> None:
        self.reading = threading.Event()
        self.release_read = threading.Event()
        self.released = 0
        self.released_during_read = 0

    def read(self) -> tuple[bool, Image | None]:
        self.reading.set()
        self.release_read.wait(10)
        return True, np.zeros((4, 4, 3), np.uint8)

    def release(self) -> None:
        self.released += 1
        if self.reading.is_set() and not self.release_read.is_set():
            self.released_during_read += 1


def test_closing_a_capture_during_a_hung_read_leaves_its_release_to_that_read() -> None:
    """close() neither waits for the read (it held the lock through it: close, and the next
    open, hung as long as the stream) nor releases the capture under it."""
    source = VideoCaptureSource("rtsp://camera.invalid/stream")
    hung = _HungCapture()
    source._cap = hung  # as open() leaves it
    frames: list[Image | None] = []
    reader = threading.Thread(target=lambda: frames.append(source.read()))
    reader.start()
    assert hung.reading.wait(5)
    started = time.monotonic()
    source.close()
    assert time.monotonic() - started < 1
    assert hung.released == 0  # not under the read
    hung.release_read.set()
    reader.join(5)
    assert hung.released == 1 and hung.released_during_read == 0
    assert frames == [None]  # a frame of a closed stream is not handed on


def test_closing_an_idle_capture_releases_it_at_once() -> None:
    source = VideoCaptureSource("rtsp://camera.invalid/stream")
    idle = _HungCapture()
    source._cap = idle
    source.close()
    assert idle.released == 1
    assert source.read() is None
