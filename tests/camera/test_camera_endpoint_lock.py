"""One camera, one process, whatever state dirs and client ids: the camera's endpoint lock.

A ``studio camera run`` held its camera's lock in its state dir and the lock of its broker
and MQTT client id (:mod:`drivers.run_lock`). A second one given another ``--state-dir``
and another ``client_id_prefix`` met neither: it opened the same camera and published its
cards for the same table beside the first. Now each camera also holds a lock named by what
its source leads to (:mod:`drivers.camera.endpoint`): a device's real path, a URL; not a
recording, which any number of processes may replay. The "camera" here is a pty, a
character device as ``/dev/video0`` is: OpenCV's open of it never answers, so the camera
gives each attempt up at its ``open_timeout`` and tries again, holding its lock throughout
(a camera being reconnected is still that process's camera).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_support import interrupted, reaped, wait_line

from calibration.deck_profile import DeckProfile
from drivers.camera.endpoint import camera_endpoint
from drivers.camera.runner import build_cameras
from drivers.run_lock import DeviceBusyError, RunLock, endpoint_lock_path
from hwsim.camera.virtual import VirtualCamera
from studio.bus import EmbeddedBroker
from studio.config.loader import load_config
from studio.errors import ConfigError

STUDIO = Path(sys.executable).parent / "studio"


@pytest.fixture
def device() -> Iterator[str]:
    """A character device no other test uses: a pty's slave, open for the test."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(slave)
        os.close(master)


def _camera_files(folder: Path, deck_profile: DeckProfile) -> None:
    VirtualCamera(level="easy", seed=0).calibration().save(folder / "table.json")
    deck_profile.save(folder / "deck.json")


def _config(folder: Path, name: str, url: str, cameras: list[tuple[str, str]]) -> Path:
    """``folder/{name}.toml``: a client id prefix of its own, a camera ``cam-1`` per
    (table, source)."""
    text = f'[broker]\nurl = "{url}"\nclient_id_prefix = "{name}{uuid.uuid4().hex[:8]}"\n'
    for table, source in cameras:
        text += (
            f'[[tables]]\nid = "{table}"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
            f'options = {{ source = "{source}", deck = "deck.json", table = "table.json", '
            "open_timeout = 0.5 }\n"
        )
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


async def _camera_run(config: Path, state: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(STUDIO), "camera", "run", "--config", str(config), "--state-dir", str(state),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


def _probe(folder: Path, endpoint: str) -> RunLock:
    """The lock another process's device leading to ``endpoint`` takes (a state dir of its
    own, no broker: only the endpoint lock can meet a camera's)."""
    return RunLock(folder / "probe" / "t__probe.run.lock", "t", "probe", endpoint=endpoint)


@pytest.mark.timeout(120)
async def test_a_second_process_on_one_camera_device_is_refused_until_the_first_is_gone(
    tmp_path: Path, deck_profile: DeckProfile, device: str
) -> None:
    _camera_files(tmp_path, deck_profile)
    link = tmp_path / "video0"  # as /dev/v4l/by-id/... leads to /dev/video0
    link.symlink_to(device)
    table = f"t-{uuid.uuid4().hex[:12]}"
    async with EmbeddedBroker() as broker:
        # Other client ids, other state dirs, the device named otherwise: one camera.
        first = _config(tmp_path, "a", broker.url, [(table, str(link))])
        second = _config(tmp_path, "b", broker.url, [(table, device)])
        async with reaped(await _camera_run(first, tmp_path / "a")) as a:
            assert a.stderr is not None
            await wait_line(a.stderr, "running 1 cameras")  # said once its locks are held
            # Its open never answers: given up, and retried, the camera's lock held throughout.
            await wait_line(a.stderr, "not opened within 0.5 s")
            await wait_line(a.stderr, "is still blocked 0.5 s later")
            async with reaped(await _camera_run(second, tmp_path / "b")) as b:
                try:
                    _, err = await asyncio.wait_for(b.communicate(), 30)
                except TimeoutError:  # before: it ran, beside the first
                    pytest.fail("a second camera process ran on the first one's camera")
            assert b.returncode == 2, err.decode()[-3000:]
            assert err.decode().strip() == (
                f"error: cam-1 of table {table} is already run by another process "
                f"(lock {endpoint_lock_path(device)} held by pid {a.pid}, the same device "
                f"{device}); stop it first"
            )
            a.kill()  # no stop of its own: the kernel lets its lock go
            await a.wait()

        # Not stale: the second camera process takes the camera now, holds it while it runs...
        async with reaped(await _camera_run(second, tmp_path / "b")) as b:
            assert b.stderr is not None
            await wait_line(b.stderr, "running 1 cameras")
            await wait_line(b.stderr, "is still blocked 0.5 s later")
            with pytest.raises(DeviceBusyError, match=f"held by pid {b.pid}, the same device"):
                _probe(tmp_path, device).acquire()
            await interrupted(b, 30)
            assert b.returncode == 0
    # ... and lets it go when it stops.
    free = _probe(tmp_path, device)
    free.acquire()
    free.release()


def test_what_a_camera_source_leads_to(tmp_path: Path, device: str) -> None:
    link = tmp_path / "video0"
    link.symlink_to(device)
    assert camera_endpoint(str(link)) == camera_endpoint(device) == os.path.realpath(device)
    if sys.platform.startswith("linux"):
        # OpenCV's capture index N is /dev/videoN (its V4L2 backend): one camera.
        assert camera_endpoint("0") == os.path.realpath("/dev/video0")
    # A URL: the scheme's port, a loopback name, no login (never printed in a refusal).
    url = camera_endpoint("rtsp://admin:s3cret@LocalHost/stream1?channel=2")
    assert url == "rtsp://127.0.0.1:554/stream1?channel=2"
    assert camera_endpoint("rtsp://127.0.0.1:554/stream1?channel=2") == url
    assert camera_endpoint("http://[::1]:8080/t1/camera.mjpg") == (
        "http://127.0.0.1:8080/t1/camera.mjpg"
    )
    # Two channels of one video recorder are two cameras.
    assert camera_endpoint("rtsp://nvr/ch1") != camera_endpoint("rtsp://nvr/ch2")
    # A recording is read, not taken, and each process makes its own virtual camera.
    (tmp_path / "frames").mkdir()
    (tmp_path / "round.mp4").write_bytes(b"")
    for source in (
        "virtual",
        "virtual:hard",
        str(tmp_path / "frames"),
        str(tmp_path / "round.mp4"),
    ):
        assert camera_endpoint(source) is None, source
    assert camera_endpoint(f"file://{tmp_path / 'round.mp4'}") is None


def test_recordings_are_replayed_by_several_processes_but_a_camera_by_one(
    tmp_path: Path, deck_profile: DeckProfile, device: str
) -> None:
    _camera_files(tmp_path, deck_profile)
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "000.png").write_bytes(b"")

    def runner(name: str, source: str) -> RunLock:
        config = _config(tmp_path, name, "mqtt://127.0.0.1:1883", [("t1", source)])
        (camera,) = build_cameras(load_config(config), base_dir=tmp_path, state_dir=tmp_path / name)
        assert camera.run_lock is not None
        return camera.run_lock

    replay, again = runner("replay", "frames"), runner("again", str(tmp_path / "frames"))
    replay.acquire()
    try:
        again.acquire()  # a folder of frames: both run
        again.release()
        ours, theirs = runner("ours", device), runner("theirs", device)
        ours.acquire()
        try:
            with pytest.raises(DeviceBusyError, match=f"the same device {device}"):
                theirs.acquire()
        finally:
            ours.release()
        theirs.acquire()
        theirs.release()
    finally:
        replay.release()


def test_two_cameras_of_one_config_on_one_camera_are_refused(
    tmp_path: Path, deck_profile: DeckProfile, device: str
) -> None:
    _camera_files(tmp_path, deck_profile)
    config = _config(tmp_path, "c", "mqtt://127.0.0.1:1883", [("t1", device), ("t2", device)])
    # Before: built, and the second camera's lock refused it as "run by another process".
    with pytest.raises(ConfigError) as caught:
        build_cameras(load_config(config), base_dir=tmp_path, state_dir=tmp_path / "state")
    assert str(caught.value) == (
        f"tables[1].devices[0].options.source: {device} is already the source of t1/cam-1: "
        "one camera, one camera device"
    )
