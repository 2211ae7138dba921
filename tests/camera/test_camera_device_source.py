"""A camera named by its device path is live as a capture index is, and follows its link.

Until 2026-12-07 a source given as a path was a file unless it had ``://``: a camera
configured as ``/dev/video0`` or ``/dev/v4l/by-id/...`` ended for good at the first read
that returned nothing (a USB camera unplugged a moment), and its open had no deadline (a
device that never answers held it for ever). And ``camera_source`` resolved the path once,
at the start: a by-id link re-pointed after a USB re-enumeration was not followed, by the
camera nor by its endpoint lock. The "devices" here: a pty (a character device whose open
by OpenCV never answers), and FIFOs fed a Y4M stream, which OpenCV reads as it reads a
camera, each named through a symbolic link as ``/dev/v4l/by-id/...`` names ``/dev/videoN``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from device_support import SIZE, Feed, repoint
from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.runner import build_cameras, run_cameras
from drivers.camera.service import CameraService
from drivers.camera.sources import FrameSource, open_source
from drivers.run_lock import DeviceBusyError, RunLock
from hwsim.camera.virtual import VirtualCamera
from studio.backoff import Backoff
from studio.config.loader import load_config


@pytest.fixture
def pty() -> Iterator[str]:
    """A character device no other test uses: a pty's slave, open for the test (closing
    it at the end lets an open still blocked in it return)."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(slave)
        os.close(master)


def _service(source: FrameSource, profile: DeckProfile, out: ServiceOutputs) -> CameraService:
    return CameraService(
        source,
        Recogniser(profile, VirtualCamera(level="easy", seed=5, size=SIZE).calibration()),
        out.publish,
        device="cam-1",
        backoff=Backoff(initial=0.05, maximum=0.1, rng=random.Random(1)),
        on_availability=out.announce,
        open_timeout=0.5,
        frame_timeout=2.0,
    )


async def _until(condition: object, what: str, seconds: float = 20.0) -> None:
    assert callable(condition)
    try:
        async with asyncio.timeout(seconds):
            while not condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        pytest.fail(f"not within {seconds:g} s: {what}")


def test_a_device_path_is_live_as_a_capture_index_is(tmp_path: Path, pty: str) -> None:
    link = tmp_path / "video0"  # as /dev/v4l/by-id/... leads to /dev/video0
    link.symlink_to(pty)
    os.mkfifo(tmp_path / "stream")
    (tmp_path / "round.mp4").write_bytes(b"")
    (tmp_path / "frames").mkdir()
    # Before: only the index was (the others were files, ended by their first empty read).
    for spec in ("0", pty, str(link), str(tmp_path / "stream")):
        assert open_source(spec).live, spec
    for spec in (str(tmp_path / "round.mp4"), str(tmp_path / "frames")):
        assert not open_source(spec).live, spec


async def test_a_device_that_never_answers_its_open_is_given_up_and_retried(
    tmp_path: Path, pty: str, profile: DeckProfile
) -> None:
    link = tmp_path / "video0"
    link.symlink_to(pty)
    out = ServiceOutputs()
    service = _service(open_source(str(link)), profile, out)
    task = asyncio.create_task(service.run())
    try:
        # Before: the open waited for ever (no deadline for a path): no attempt was given up.
        await _until(
            lambda: service.open_timeouts >= 2 and service.reconnects >= 2,
            f"the open given up and retried (open timeouts {service.open_timeouts}, "
            f"reconnects {service.reconnects})",
        )
        assert not task.done()
        assert out.availability == []  # never a frame: never online
    finally:
        service.stop()
        async with asyncio.timeout(5):  # at once, the open still blocked
            await task


async def test_a_device_whose_stream_ends_is_reopened_not_ended(
    tmp_path: Path, profile: DeckProfile
) -> None:
    feed = Feed(tmp_path / "video-stream", sessions=2)
    link = tmp_path / "video0"
    link.symlink_to(feed.fifo)
    out = ServiceOutputs()
    service = _service(open_source(str(link)), profile, out)
    task = asyncio.create_task(service.run())
    try:
        await _until(lambda: service.frames > 5, "frames of the first stream")
        feed.ends[0].set()  # the device goes: its reads return nothing
        # Before: the camera ended there, for good (a path was a file).
        await _until(lambda: task.done() or out.availability[-1:] == [False], "the device let go")
        assert not task.done(), "the camera ended at the first empty read"
        feed.starts[1].set()  # the device is back (its stream closed by the camera)
        await _until(feed.opened[1].is_set, "the device opened again")
        frames = service.frames
        await _until(lambda: service.frames > frames + 5, "frames of the second stream")
        assert out.availability == [True, False, True]
        assert service.reconnects >= 1
    finally:
        service.stop()
        feed.close()
        async with asyncio.timeout(10):
            await task


def _probe(folder: Path, endpoint: str) -> RunLock:
    """The lock another process's device leading to ``endpoint`` takes (a state dir of its
    own, no broker: only the endpoint lock can meet the camera's)."""
    return RunLock(folder / "probe" / "t__probe.run.lock", "t", "probe", endpoint=endpoint)


async def test_a_device_link_re_pointed_is_followed_by_the_camera_and_its_lock(
    tmp_path: Path, profile: DeckProfile
) -> None:
    VirtualCamera(level="easy", seed=5, size=SIZE).calibration().save(tmp_path / "table.json")
    profile.save(tmp_path / "deck.json")
    first, second = Feed(tmp_path / "usb-1"), Feed(tmp_path / "usb-2")
    link = tmp_path / "by-id-video0"  # /dev/v4l/by-id/usb-...-video-index0
    link.symlink_to(first.fifo)
    table = f"t-{uuid.uuid4().hex[:12]}"
    config = tmp_path / "studio.toml"
    config.write_text(
        f'[broker]\nurl = "mqtt://127.0.0.1:1883"\nclient_id_prefix = "live{uuid.uuid4().hex[:8]}"\n'
        f'[[tables]]\nid = "{table}"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
        f'options = {{ source = "{link.name}", deck = "deck.json", table = "table.json", '
        "open_timeout = 1, frame_timeout = 2 }\n"
    )
    (camera,) = build_cameras(load_config(config), base_dir=tmp_path, state_dir=tmp_path / "s")
    task = asyncio.create_task(run_cameras([camera]))
    mine = f"held by pid {os.getpid()}, the same device"
    try:
        await _until(lambda: camera.service is not None and camera.service.frames > 5, "frames")
        service = camera.service
        assert service is not None
        with pytest.raises(DeviceBusyError, match=f"{mine} {first.fifo}"):
            _probe(tmp_path, str(first.fifo)).acquire()
        # A USB re-enumeration: the camera comes back under another node, its link re-pointed,
        # which another process holds for now: not opened while it does (tried again).
        other = _probe(tmp_path, str(second.fifo))
        other.acquire()
        try:
            repoint(link, second.fifo)
            first.ends[0].set()
            reconnects = service.reconnects
            await _until(lambda: service.reconnects >= reconnects + 3, "attempts to reopen")
            assert not second.opened[0].is_set()
        finally:
            other.release()
        # Before: the camera reopened what the link led to at the start, gone for good.
        await _until(second.opened[0].is_set, "the camera opened what its link leads to now")
        frames = service.frames
        await _until(lambda: service.frames > frames + 5, "frames of the new device")
        # Its lock moved with it: the new device is refused to others, the old one is free.
        with pytest.raises(DeviceBusyError, match=f"{mine} {second.fifo}"):
            _probe(tmp_path, str(second.fifo)).acquire()
        free = _probe(tmp_path, str(first.fifo))
        free.acquire()
        free.release()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(10):
                await task
        first.close()
        second.close()
