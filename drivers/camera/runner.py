"""Every camera of a studio config as a running service: ``studio camera run``.

Each camera device's ``options`` (:class:`studio.config.models.CameraOptions`) name
its frame source, its deck profile and its table calibration. Each camera gets its own
:class:`MessageBus`, whose last will is the camera's availability: ``online`` while
frames flow, ``offline`` while its stream is being reconnected or when it stops. Its
last published seq is kept in ``STATE_DIR`` so that a restart continues the numbering
(a camera whose state file is missing starts at the Unix time in ms, above any seq an
earlier run can have reached).
One process per camera: :func:`run_cameras` first takes each camera's run lock
(``STATE_DIR/{table}__{device}.run.lock``, :mod:`drivers.run_lock`; for this machine also
its broker and client id's, and its source's endpoint's, :mod:`drivers.camera.endpoint`)
and holds it until they stop; a camera another process already runs refuses them all
before any connects, whatever state dir and client ids that process was given.

    cameras = build_cameras(config, base_dir=Path("/etc/studio"), state_dir=Path("var/camera"))
    await run_cameras(cameras)
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from calibration.barcode import BarcodeReader, available_backends
from calibration.deck_profile import DeckProfile
from calibration.recogniser import DEFAULT_THRESHOLD, Recogniser
from calibration.table import TableCalibration
from drivers.camera.endpoint import camera_endpoint
from drivers.camera.service import CameraService, bus_publisher
from drivers.camera.sources import open_source
from drivers.health import HealthStatus, health_report
from drivers.run_lock import DeviceBusyError, RunLock, run_locks
from drivers.state import StateFile
from studio.bus import MessageBus
from studio.bus.client import OFFLINE, ONLINE
from studio.config.camera_files import (
    camera_source,
    cameras,
    is_device_path,
    is_path_source,
    load_camera_file,
)
from studio.config.models import BrokerSettings, CameraOptions, DeviceSettings, StudioConfig
from studio.contract import Topics
from studio.errors import ConfigError, StudioError, VisionError

_LOGGER = logging.getLogger(__name__)


class CameraRunner:
    """One camera: its recogniser, built (and checked) up front, and its service."""

    def __init__(
        self,
        table_id: str,
        device: DeviceSettings,
        broker: BrokerSettings,
        *,
        base_dir: Path = Path("."),
        state_dir: Path | None = None,
        key: str | None = None,
    ) -> None:
        self.table_id = table_id
        self.device_id = device.id
        self.broker = broker
        self.client_id = f"cam-{table_id}-{device.id}"
        self.options = options = device.camera
        # Where its options are in the file (build_cameras counts them, as config check does).
        key = key or f"tables[{table_id}].devices[{device.id}].options"
        where = key.removesuffix(".options")
        if options.source is None:
            raise ConfigError(f"{where}: options.source is required to run the camera")
        if options.table is None:
            raise ConfigError(
                f"{where}: options.table (a table calibration) is required to attribute zones"
            )
        # Each file's mistake is worded as config check words it (key and path).
        profile = (
            load_camera_file(f"{key}.deck", options.deck, base_dir, DeckProfile.from_dict)
            if options.deck
            else None
        )
        calibration = load_camera_file(
            f"{key}.table", options.table, base_dir, TableCalibration.from_dict
        )
        source = camera_source(f"{key}.source", options.source, base_dir)
        device_path = is_path_source(options.source) and is_device_path(source)
        if device_path:
            # A device is opened (and locked) by the path configured, its links resolved
            # at each open, not by what they led to at the start: /dev/v4l/by-id/...
            # re-pointed after a USB re-enumeration is followed (camera_source resolved
            # it once, and the camera reopened a device that was gone, for ever).
            source = str((base_dir / options.source).absolute())
        try:
            self.recogniser = Recogniser(
                profile,
                calibration,
                threshold=options.threshold or DEFAULT_THRESHOLD,
                barcodes=_barcode_reader(options),
            )
            if self.recogniser.profile is None and self.recogniser.barcodes is None:
                raise ConfigError("nothing to identify cards with: give options.deck or barcodes")
            self.source = open_source(
                source, open_timeout=options.open_timeout, read_timeout=options.frame_timeout
            )
        except StudioError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        self.state = StateFile.of_device(state_dir, table_id, device.id)
        # What the source leads to (None: a recording, ``virtual``): one camera, one process.
        self.endpoint = camera_endpoint(source)
        # A device path is locked as a serial port is: by what it leads to at each (re)open
        # (RunLock.follow_port, called by _follow_device before each open).
        self._device_path = source if device_path else None
        self.run_lock = RunLock.of_device(
            state_dir,
            table_id,
            device.id,
            broker=broker,
            client_id=self.client_id,
            port=self._device_path,
            endpoint=None if self._device_path else self.endpoint,
        )
        self.service: CameraService | None = None
        self._health_seq = 0

    async def run(self) -> None:
        """Serve the camera until cancelled (or until a file or folder source ends)."""
        path = self._device_path
        if path is not None and not await asyncio.to_thread(os.path.exists, path):
            # Said once, plainly; each failed open after it is the reconnect loop's (a
            # reason repeated is logged once a minute), as for a camera lost while running.
            _LOGGER.warning(
                "camera %s/%s: no such device (yet): %s: waiting for it (offline, its open "
                "retried with backoff); plug it in, or check options.source",
                self.table_id,
                self.device_id,
                path,
            )
        topics = Topics(self.table_id)
        availability = topics.availability(self.device_id)
        bus = MessageBus(self.broker, self.client_id, availability=availability)
        bus.availability_state = OFFLINE  # until the first frame

        async def announce(online: bool) -> None:
            bus.availability_state = ONLINE if online else OFFLINE
            await bus.publish(availability, bus.availability_state, retain=True)
            _LOGGER.info(
                "camera %s/%s %s", self.table_id, self.device_id, "online" if online else "offline"
            )

        async def report_health(status: HealthStatus, reason: str) -> None:
            health = health_report(
                self.device_id, self._health_seq, status, reason, self._counters()
            )
            self._health_seq = health.seq
            await bus.publish(topics.health(self.device_id), health, qos=1)

        async with bus:
            # Frames are read once there is somewhere to send what they show.
            await bus.wait_connected()
            options = self.options
            self.service = CameraService(
                self.source,
                self.recogniser,
                bus_publisher(bus, self.table_id),
                device=self.device_id,
                settle_frames=options.settle_frames,
                remove_frames=options.remove_frames,
                read_attempts=options.read_attempts,
                max_fps=options.max_fps,
                frame_timeout=options.frame_timeout,
                open_timeout=options.open_timeout,
                state=self.state,
                on_availability=announce,
                label=f"{self.table_id}/{self.device_id}",
                on_health=report_health,
                before_open=self._follow_device,
            )
            await self.service.run()
            # Only a file or a folder of frames ends; a live source reconnects for ever.
            _LOGGER.info(
                "camera %s/%s: %s ended after %d frames (last seq %d)",
                self.table_id,
                self.device_id,
                self.source.name,
                self.service.frames,
                self.service.seq,
            )

    def _follow_device(self) -> None:
        """Before each open: the endpoint lock moves to what the device path leads to now
        (a link re-pointed); a device another process holds is not opened (retried)."""
        if self.run_lock is None or self._device_path is None:
            return
        try:
            self.run_lock.follow_port()
        except DeviceBusyError as exc:
            raise VisionError(f"{self._device_path} not opened: {exc}") from exc

    def _counters(self) -> dict[str, int]:
        service = self.service
        if service is None:
            return {}
        return {
            "frames": service.frames,
            "reconnects": service.reconnects,
            "unreadable_run": service.unreadable_run,
            # Opens and reads given up at their deadlines (options.open_timeout and
            # frame_timeout): a camera that keeps hanging, not merely reconnecting.
            "open_timeouts": service.open_timeouts,
            "stalls": service.stalls,
            # Cards placed outside every zone (not published): many mean a camera moved
            # since its calibration, or a layout whose zones miss where cards are dealt.
            "outside_zones": service.outside_zones,
        }


def build_cameras(
    config: StudioConfig,
    *,
    tables: Iterable[str] | None = None,
    base_dir: Path = Path("."),
    state_dir: Path | None = None,
) -> list[CameraRunner]:
    """A runner for every camera device of the selected tables (all of them by default).

    Two of them on one camera (:mod:`drivers.camera.endpoint`) are refused here, naming
    both: their run locks would refuse the second as "run by another process"."""
    runners: list[CameraRunner] = []
    for key, table_id, device in cameras(config, tables):
        runner = CameraRunner(
            table_id, device, config.broker, base_dir=base_dir, state_dir=state_dir, key=key
        )
        for other in runners:
            if runner.endpoint is not None and runner.endpoint == other.endpoint:
                raise ConfigError(
                    f"{key}.source: {runner.endpoint} is already the source of "
                    f"{other.table_id}/{other.device_id}: one camera, one camera device"
                )
        runners.append(runner)
    return runners


async def run_cameras(cameras: list[CameraRunner]) -> None:
    """Run until cancelled, or until every camera's finite source has ended.

    Raises :class:`~drivers.run_lock.DeviceBusyError` first, before any camera connects,
    if another process runs any of them (same state dir, same client id on the same broker,
    or the same camera: its source's endpoint)."""
    with run_locks(camera.run_lock for camera in cameras):
        async with asyncio.TaskGroup() as group:
            for camera in cameras:
                group.create_task(camera.run(), name=f"camera:{camera.table_id}/{camera.device_id}")


def _barcode_reader(options: CameraOptions) -> BarcodeReader | None:
    if options.barcodes == "off":
        return None
    if options.barcodes == "auto":
        return BarcodeReader("auto") if available_backends() else None
    return BarcodeReader(options.barcodes)  # says so when that backend is missing
