"""A camera device not there when `studio camera run` starts is waited for, as a lost one is.

Until 2026-12-07 ``camera_source`` refused a device path that was not there at the start
(``no such file, folder or device``): after a reboot a USB camera enumerated a moment late,
or one being replaced, kept `studio camera run` from starting at all, while a camera lost
after the start was waited for, and a serial port missing at the start is too (`studio
drivers run` retries it with backoff). A path names a device when it is under ``/dev``,
named so or by what its links lead to (``is_device_path``, the one rule); a recording not
there is still one clear mistake. ``/dev`` is not the tests' to write in, so the camera's
path here is a link of the config's folder, as an operator's own link to
``/dev/v4l/by-id/...`` would be: leading under ``/dev`` to nothing, then re-pointed at a
FIFO fed a Y4M stream (the camera plugged in; OpenCV reads it as it reads a camera).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest
from broker_support import MOSQUITTO_URL, clear_retained
from device_support import Feed, repoint
from process_support import interrupted, reaped, wait_line
from retained_support import retained

from calibration.deck_profile import DeckProfile
from drivers.camera.sources import open_source
from drivers.run_lock import DeviceBusyError, RunLock
from hwsim.camera.virtual import VirtualCamera
from studio.config import BrokerSettings
from studio.config.camera_files import camera_source, is_device_path
from studio.contract import Topics
from studio.errors import ConfigError

STUDIO = Path(sys.executable).parent / "studio"


def _nowhere_in_dev() -> str:
    """A path under ``/dev`` that nothing is at (a by-id link before udev makes it)."""
    path = f"/dev/v4l/by-id/usb-studio-test-{uuid.uuid4().hex[:12]}-video-index0"
    assert not os.path.lexists(path)
    return path


def test_a_path_names_a_device_when_it_or_its_links_lead_under_dev(tmp_path: Path) -> None:
    nowhere = _nowhere_in_dev()
    link = tmp_path / "cam0"  # an operator's own name for the by-id link
    link.symlink_to(nowhere)
    astray = tmp_path / "clip.mp4"  # a link to a recording that is not there
    astray.symlink_to(tmp_path / "recordings" / "round.mp4")
    assert is_device_path(nowhere)
    assert is_device_path(link)
    assert not is_device_path(tmp_path / "round.mp4")
    assert not is_device_path(astray)
    # Waited for: the camera opens it as a live source (reopened with backoff).
    assert camera_source("k.source", "cam0", tmp_path) == nowhere
    assert camera_source("k.source", nowhere, tmp_path) == nowhere
    assert open_source(str(link)).live
    # A recording not there is still one clear mistake.
    for source in ("round.mp4", "clip.mp4"):
        with pytest.raises(ConfigError, match=r"^k\.source: no such file, folder or device: "):
            camera_source("k.source", source, tmp_path)


def _probe(folder: Path, endpoint: str) -> RunLock:
    """The lock another process's device leading to ``endpoint`` takes (a state dir of its
    own, no broker: only the endpoint lock can meet the camera's)."""
    return RunLock(folder / "probe" / "t__probe.run.lock", "t", "probe", endpoint=endpoint)


async def _availability(topic: str, want: bytes) -> None:
    """Until the camera's retained availability is ``want`` (its bus connects after it
    says it waits for its device)."""
    broker = BrokerSettings(url=MOSQUITTO_URL)
    got: list[tuple[str, bytes]] = []
    async with asyncio.timeout(30):
        while (topic, want) not in got:
            got = await retained(broker, topic)
            await asyncio.sleep(0.1)


@pytest.mark.timeout(120)
async def test_a_camera_started_before_its_device_waits_for_it_and_takes_it(
    tmp_path: Path, deck_profile: DeckProfile
) -> None:
    VirtualCamera(level="easy", seed=0).calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    nowhere = _nowhere_in_dev()
    link = tmp_path / "cam0"
    link.symlink_to(nowhere)
    table = f"t-{uuid.uuid4().hex[:12]}"
    config = tmp_path / "studio.toml"
    config.write_text(
        f'[broker]\nurl = "{MOSQUITTO_URL}"\nclient_id_prefix = "miss{uuid.uuid4().hex[:8]}"\n'
        f'[[tables]]\nid = "{table}"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
        f'options = {{ source = "{link.name}", deck = "deck.json", table = "table.json", '
        "open_timeout = 1, frame_timeout = 2 }\n"
    )
    availability = Topics(table).availability("cam-1")
    feed: Feed | None = None
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "camera", "run", "--config", str(config), "--state-dir", str(tmp_path / "s"),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        async with reaped(process):
            assert process.stderr is not None
            seen: list[str] = []
            # Before: `error: ...options.source: no such file, folder or device`, exit 2.
            await wait_line(process.stderr, "running 1 cameras", seen)
            await wait_line(process.stderr, f"camera {table}/cam-1: no such device (yet)", seen)
            assert str(link) in seen[-1] and "waiting for it" in seen[-1]
            # Offline while it waits, its open retried (the reconnect loop's line)...
            await wait_line(process.stderr, "link down (no such device (yet)", seen)
            await _availability(availability, b"offline")
            # ... and the device it was configured as is its own already (a serial port's is).
            with pytest.raises(DeviceBusyError, match=f"held by pid {process.pid}"):
                _probe(tmp_path, nowhere).acquire()

            # Plugged in: the link now leads to a device.
            feed = Feed(tmp_path / "video0")
            repoint(link, feed.fifo)
            await wait_line(process.stderr, f"camera {table}/cam-1 online", seen)
            assert feed.opened[0].is_set()
            await _availability(availability, b"online")
            # Its lock moved to what it opened; the name it waited under is free.
            with pytest.raises(
                DeviceBusyError, match=f"held by pid {process.pid}, the same device {feed.fifo}"
            ):
                _probe(tmp_path, str(feed.fifo)).acquire()
            free = _probe(tmp_path, nowhere)
            free.acquire()
            free.release()
            _, err = await interrupted(process, 30)
            assert process.returncode == 0, err.decode()[-3000:]
    finally:
        if feed is not None:
            feed.close()
        clear_retained(MOSQUITTO_URL, table)
