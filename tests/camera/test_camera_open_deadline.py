"""Opening a frame source has a deadline, and a source never has two calls blocked in it.

Before: ``open()`` ran without a deadline (an RTSP/HTTP camera that accepts and never
answers held it for OpenCV's own 30 s, a fake one for ever) and a stop could not end it;
and each reconnect of a stalled stream started a reader thread of its own while the
last one was still blocked, so threads piled up, one per attempt, until OpenCV gave up.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import cv2
import numpy as np
import pytest
from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from calibration.table import TableCalibration
from drivers.camera.service import CameraService
from drivers.camera.sources import FrameSource, Image, VideoCaptureSource
from hwsim.camera.virtual import VirtualCamera
from studio.backoff import Backoff


class _BlockingSource:
    """A live source of the virtual camera whose ``open`` blocks while ``open_blocks`` is
    set and whose ``read`` blocks while ``read_blocks`` is, each until ``release`` is (a
    camera that accepts the connection and never answers, a stream gone quiet)."""

    def __init__(self, camera: VirtualCamera, name: str) -> None:
        self.camera = camera
        self.name = name
        self.live = True
        self.open_blocks = threading.Event()
        self.read_blocks = threading.Event()
        self.release = threading.Event()
        self.opens = 0  # open() calls begun
        self.opened = 0  # open() calls returned
        self.closes = 0
        self.blocked = 0  # calls blocked in the source right now
        self.most_blocked = 0  # the most calls ever blocked in it at once
        self._lock = threading.Lock()

    def _block(self) -> None:
        with self._lock:
            self.blocked += 1
            self.most_blocked = max(self.most_blocked, self.blocked)
        try:
            self.release.wait()
        finally:
            with self._lock:
                self.blocked -= 1

    def open(self) -> None:
        self.opens += 1
        if self.open_blocks.is_set():
            self._block()
        self.opened += 1

    def read(self) -> Image | None:
        if self.read_blocks.is_set():
            self._block()
            return None
        return np.asarray(self.camera.read(), np.uint8)

    def close(self) -> None:
        self.closes += 1


def _service(
    source: FrameSource,
    calibration: TableCalibration,
    profile: DeckProfile,
    out: ServiceOutputs,
    *,
    open_timeout: float,
    frame_timeout: float,
) -> CameraService:
    return CameraService(
        source,
        Recogniser(profile, calibration),
        out.publish,
        device="cam-1",
        backoff=Backoff(initial=0.01, maximum=0.02, rng=random.Random(1)),
        on_availability=out.announce,
        open_timeout=open_timeout,
        frame_timeout=frame_timeout,
    )


async def _until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)


def _eventually(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never came true"
        time.sleep(0.01)


def _run_camera(
    service: CameraService,
    body: Callable[[], Awaitable[None]],
    *,
    cleanup: Callable[[], None] = lambda: None,
) -> None:
    """Run ``service`` while ``body`` runs, then stop it: it must end within 5 s, not at its
    source's own deadlines. ``cleanup`` lets a blocked source go, whatever happened."""

    async def scenario() -> None:
        task = asyncio.create_task(service.run(), name="camera")
        try:
            async with asyncio.timeout(60):
                await body()
            service.stop()
            async with asyncio.timeout(5):
                await task
        finally:
            service.stop()
            cleanup()

    asyncio.run(scenario())


def _threads_of(source: FrameSource) -> int:
    """Live threads working for ``source`` (named after it)."""
    return sum(1 for t in threading.enumerate() if source.name in t.name and t.is_alive())


def test_an_open_that_blocks_is_given_up_at_its_deadline_and_not_run_twice(
    profile: DeckProfile,
) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    source = _BlockingSource(cam, "blocking-open")
    source.open_blocks.set()
    out = ServiceOutputs()
    service = _service(source, cam.calibration(), profile, out, open_timeout=0.2, frame_timeout=5.0)

    async def body() -> None:
        # Each attempt gives up at the deadline and is retried through run_forever...
        await _until(lambda: service.reconnects >= 4)
        assert service.open_timeouts >= 4
        # ...waiting for the open still blocked instead of starting another beside it.
        assert source.opens == 1 and source.blocked == 1
        assert out.availability == [] and not service.online  # offline all along
        assert _threads_of(source) == 1
        source.open_blocks.clear()
        source.release.set()  # the camera answers at last: that open is used
        await _until(lambda: service.frames >= 3)
        assert out.availability == [True]
        assert source.opens == 1

    _run_camera(service, body, cleanup=source.release.set)
    assert source.most_blocked == 1


def test_a_camera_stopped_during_a_blocked_open_stops_and_closes_it_late(
    profile: DeckProfile,
) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    source = _BlockingSource(cam, "stopped-in-open")
    source.open_blocks.set()
    service = _service(
        source, cam.calibration(), profile, ServiceOutputs(), open_timeout=60.0, frame_timeout=5.0
    )

    async def body() -> None:
        await _until(lambda: source.blocked == 1)

    _run_camera(service, body, cleanup=source.release.set)
    assert service.reconnects == 0
    # The open returned after the service stopped; the source's thread closed what it opened.
    _eventually(lambda: source.closes == 1)
    assert source.opened == 1


def test_a_stream_that_stays_stalled_keeps_one_thread_across_reconnects(
    profile: DeckProfile,
) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    source = _BlockingSource(cam, "stays-stalled")
    out = ServiceOutputs()
    service = _service(
        source, cam.calibration(), profile, out, open_timeout=0.05, frame_timeout=0.05
    )

    async def body() -> None:
        await _until(lambda: service.frames >= 2 and service.online)
        # Counted from the stall: on a loaded machine an ordinary frame can take longer
        # than the 50 ms timeout, and the camera dropped and reconnected before it.
        shown, base = len(out.availability), service.reconnects
        source.read_blocks.set()  # the stream goes quiet and stays so
        await _until(lambda: service.reconnects >= base + 10)
        assert out.availability[shown:] == [False]  # offline, and not online in between
        # One read blocked, waited for; no reader started beside it at each reconnect.
        assert source.blocked == 1 and _threads_of(source) == 1
        opens = source.opens
        source.read_blocks.clear()
        source.release.set()  # the stalled read returns (OpenCV's read timeout)
        await _until(lambda: out.availability[-1:] == [True])
        # Opened again (more than once on a loaded machine, where a 50 ms frame timeout
        # lapses and reconnects), never beside a reader still running.
        assert source.opens > opens
        assert _threads_of(source) == 1

    _run_camera(service, body, cleanup=source.release.set)
    assert source.most_blocked == 1


@contextlib.contextmanager
def _http_server(
    name: str, path: str, on_connect: Callable[[socket.socket], None]
) -> Iterator[tuple[str, list[socket.socket]]]:
    """A local socket that accepts every connection and hands it to ``on_connect``; the URL
    of ``path`` on it, and the connections it accepted."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed at the end of the test
                return
            accepted.append(conn)
            with contextlib.suppress(OSError):  # the client may have gone
                on_connect(conn)

    threading.Thread(target=serve, name=name, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}{path}", accepted
    finally:
        server.close()
        for conn in accepted:
            conn.close()


@pytest.fixture
def silent_http_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """An HTTP URL on a local socket that accepts connections and never answers."""
    with _http_server("silent-http", "/stream.mjpg", lambda conn: None) as served:
        yield served


def test_an_http_camera_that_never_answers_is_given_up_at_the_open_deadline(
    profile: DeckProfile, silent_http_server: tuple[str, list[socket.socket]]
) -> None:
    url, accepted = silent_http_server
    source = VideoCaptureSource(url, open_timeout=0.5, read_timeout=0.5)
    cam = VirtualCamera(level="easy", seed=12)
    out = ServiceOutputs()
    service = _service(source, cam.calibration(), profile, out, open_timeout=0.5, frame_timeout=0.5)

    async def body() -> None:
        # OpenCV alone would wait 30 s for the HTTP answer before its first retry.
        await _until(lambda: service.reconnects >= 3 and len(accepted) >= 3)
        assert out.availability == [] and not service.online
        assert _threads_of(source) <= 1

    _run_camera(service, body)


@pytest.fixture
def stalling_mjpeg_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """An HTTP MJPEG camera that sends 3 frames on each connection, then falls silent."""
    jpeg = cv2.imencode(".jpg", np.full((720, 1280, 3), 90, np.uint8))[1].tobytes()
    part = b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n%s\r\n" % (
        len(jpeg),
        jpeg,
    )

    def three_frames(conn: socket.socket) -> None:
        conn.recv(4096)  # the request
        conn.sendall(
            b"HTTP/1.0 200 OK\r\n"
            b"Content-Type: multipart/x-mixed-replace; boundary=frame\r\n\r\n" + part * 3
        )

    with _http_server("stalling-mjpeg", "/video.mjpg", three_frames) as served:
        yield served


def test_an_http_stream_that_stalls_again_and_again_keeps_one_reader_thread(
    profile: DeckProfile, stalling_mjpeg_server: tuple[str, list[socket.socket]]
) -> None:
    """OpenCV gives a stalled read up after 1 s, the service after 0.2 s: each reconnect
    waits for the read still blocked instead of reading beside it."""
    url, accepted = stalling_mjpeg_server
    source = VideoCaptureSource(url, open_timeout=2.0, read_timeout=1.0)
    cam = VirtualCamera(level="easy", seed=12)
    out = ServiceOutputs()
    service = _service(source, cam.calibration(), profile, out, open_timeout=2.0, frame_timeout=0.2)
    most_threads = 0

    async def body() -> None:
        nonlocal most_threads
        while not (service.stalls >= 3 and len(accepted) >= 3):
            most_threads = max(most_threads, _threads_of(source))
            await asyncio.sleep(0.01)
        assert out.availability[:2] == [True, False]

    _run_camera(service, body)
    assert most_threads == 1
    assert service.frames >= 9  # 3 frames from each of the 3 connections


class _SlowSource(_BlockingSource):
    """Reads take ``read_seconds`` (native work under way when the camera stops)."""

    read_seconds = 0.4
    reading = False

    def read(self) -> Image | None:
        self.reading = True
        time.sleep(self.read_seconds)
        self.reading = False
        return super().read()


def test_a_stopped_camera_lets_the_read_under_way_end_before_it_returns(
    profile: DeckProfile,
) -> None:
    # Found on CI: `studio camera run` stopped by SIGINT exited with -6 (abort) once; the
    # source's daemon thread was still inside a read when the process exited. Now run()
    # returns once that read has ended (a stalled one is given up after FINISH_WAIT).
    cam = VirtualCamera(level="easy", seed=12)
    source = _SlowSource(cam, "slow-read")
    service = _service(
        source, cam.calibration(), profile, ServiceOutputs(), open_timeout=5.0, frame_timeout=5.0
    )

    async def body() -> None:
        await _until(lambda: service.frames >= 1)
        await _until(lambda: source.reading)

    _run_camera(service, body)
    assert _threads_of(source) == 0  # before: still reading
