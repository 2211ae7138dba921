"""Frame sources for the camera service.

Every source has ``open()``, ``read() -> frame | None`` and ``close()``; ``read`` returns
``None`` when no frame is available (a dropped stream, the end of a file or a directory).
``live`` sources are reconnected by the service with backoff; finite ones end the service.
A camera device is live however it is named: a capture index (``0``), a device path
(``/dev/video0``, a ``/dev/v4l/by-id/...`` link, one not there yet; the one rule,
:func:`studio.config.camera_files.is_device_path`) or a URL; a recording (a video file, a
folder of frames) is not.

A live stream can stall: ``read`` then blocks, maybe for ever. The service gives such a read
up after its frame deadline and calls ``close()`` while the read is still blocked in
another thread; ``close`` must not wait for it (nor free what it is using under it), and
``open()`` must then open a new stream. The service makes one call at a time (its next
``open()`` waits for that read to return), so a source whose calls can block should give
up by itself in the end: :class:`VideoCaptureSource` tells OpenCV its ``open_timeout`` and
``read_timeout`` for URLs.

``open_source(spec)`` builds one from a string:

``virtual`` / ``virtual:hard``
    the simulator's :class:`hwsim.camera.virtual.VirtualCamera` (a new one, empty layout,
    which no shoe deals to: ``hwsim run --camera`` serves one in step with its shoe);
a directory
    the images in it, sorted by name, each repeated ``repeat`` times (so that a still
    image can settle in the tracker);
an integer
    an OpenCV capture device index (``0`` is the first camera);
a device path
    ``/dev/video0`` or a link to one (``/dev/v4l/by-id/...``), resolved again at each
    open, so a link re-pointed after a USB re-enumeration is followed; one under ``/dev``
    not there (not plugged in yet) fails each open until it is;
anything else
    a file or URL OpenCV can open (``rtsp://``, ``http://``, ``.mp4``...).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.image_file import image_files, read_image
from studio.config.camera_files import is_device_path
from studio.errors import VisionError
from studio.url_secrets import masked_url

Image = NDArray[np.uint8]


class FrameSource(Protocol):
    name: str
    live: bool

    def open(self) -> None: ...

    def read(self) -> Image | None: ...

    def close(self) -> None: ...


class VideoCaptureSource:
    """An OpenCV ``VideoCapture``: device index, device path, file, RTSP/HTTP URL.

    Device indices, device paths (:func:`~studio.config.camera_files.is_device_path`)
    and URLs are ``live``: the service opens them within its ``open_timeout``, gives a
    read up after its ``frame_timeout`` and reconnects them with backoff when they drop
    or go silent, one path for all three. Files are not (their end ends the camera).
    A device path is resolved at each :meth:`open`, not once: ``/dev/v4l/by-id/...``
    re-pointed after a USB re-enumeration is followed.
    A URL is opened with ``open_timeout`` and read with ``read_timeout`` (seconds) as
    OpenCV's own deadlines (FFmpeg waits 30 s for each otherwise), so that an open or a
    read the service gave up at its deadline returns soon after it, freeing the source's
    thread for the next attempt.
    """

    def __init__(
        self,
        spec: int | str,
        *,
        width: int | None = None,
        height: int | None = None,
        open_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> None:
        self.spec = spec
        # What logs, errors and thread names show: a URL's password and its secret-named
        # query values masked (``capture:rtsp://admin:***@cam/...``). It was the spec as
        # written until 2026-12-07: the password logged at each failed reconnect.
        self.shown = masked_url(spec) if isinstance(spec, str) else spec
        self.name = f"capture:{self.shown}"
        # A device given by its path was taken for a file until 2026-12-07: its first read
        # that returned nothing ended the camera for good, and its open had no deadline.
        self.device_path = (
            spec if isinstance(spec, str) and "://" not in spec and is_device_path(spec) else None
        )
        self.live = isinstance(spec, int) or "://" in str(spec) or self.device_path is not None
        self.width, self.height = width, height
        self.open_timeout, self.read_timeout = open_timeout, read_timeout
        self._cap: Any = None
        # Captures a read() is in: OpenCV does not say that releasing a VideoCapture while
        # another thread reads it is safe, so a capture closed during a (stalled) read is
        # released by that read when it returns, never under it.
        self._reading: list[Any] = []
        self._lock = threading.Lock()

    def open(self) -> None:
        self.close()
        # What a device's link leads to now (the target it had at the last open may have
        # gone, and the link been re-pointed: a USB re-enumeration).
        path = self.device_path
        target = self.spec if path is None else os.path.realpath(path)
        if path is not None and not os.path.exists(target):
            # Not plugged in (yet), or its link not made again: retried with backoff, said
            # plainly (OpenCV would try it as a file and fail in words of its own).
            leads = f" (leading to {target})" if target != path else ""
            raise VisionError(f"no such device (yet): {path}{leads}: not plugged in?")
        # Outside the lock: opening a stream can take seconds (an RTSP handshake).
        cap = cv2.VideoCapture(target, cv2.CAP_ANY, self._deadlines())
        if not cap.isOpened():
            cap.release()
            leads = f" (leading to {target})" if target != self.spec else ""
            raise VisionError(f"cannot open video source {self.shown!r}{leads}")
        if self.width:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        if self.height:
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        with self._lock:
            self._cap = cap

    def _deadlines(self) -> list[int]:
        """OpenCV's open parameters: its deadlines in ms, for URLs (devices have their own)."""
        if "://" not in str(self.spec):
            return []
        params = []
        if self.open_timeout is not None:
            params += [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, max(1, round(self.open_timeout * 1000))]
        if self.read_timeout is not None:
            params += [cv2.CAP_PROP_READ_TIMEOUT_MSEC, max(1, round(self.read_timeout * 1000))]
        return params

    def read(self) -> Image | None:
        with self._lock:
            cap = self._cap
            if cap is None:
                return None
            self._reading.append(cap)
        ok, frame = False, None
        try:
            ok, frame = cap.read()
        finally:
            with self._lock:
                self._reading.remove(cap)
                closed = cap is not self._cap
            if closed:
                cap.release()  # closed while this read was blocked: it was left to us
        if closed or not ok or frame is None:
            return None
        return np.asarray(frame, np.uint8)

    def close(self) -> None:
        """Release the capture, or leave it to the read blocked in it (see the module)."""
        with self._lock:
            cap, self._cap = self._cap, None
            in_use = cap is not None and any(c is cap for c in self._reading)
        if cap is not None and not in_use:
            cap.release()


class ImageDirectorySource:
    """The images of a directory, in name order; each is returned ``repeat`` times."""

    def __init__(self, directory: Path, *, repeat: int = 1, loop: bool = False) -> None:
        self.directory = Path(directory)
        self.name = f"dir:{self.directory}"
        self.live = False
        self.repeat = max(1, repeat)
        self.loop = loop
        self._files: list[Path] = []
        self._i = 0
        self._current: Image | None = None
        self._left = 0

    def open(self) -> None:
        if not self.directory.is_dir():
            raise VisionError(f"image directory {self.directory} not found")
        self._files = image_files(self.directory)
        if not self._files:
            raise VisionError(f"no images in {self.directory}")
        self._i = 0
        self._left = 0

    def read(self) -> Image | None:
        if self._left > 0 and self._current is not None:
            self._left -= 1
            return self._current.copy()
        if self._i >= len(self._files):
            if not self.loop or not self._files:
                return None
            self._i = 0
        path = self._files[self._i]
        self._i += 1
        self._current = read_image(path)
        self._left = self.repeat - 1
        return self._current.copy()

    def close(self) -> None:
        self._current = None


class VirtualCameraSource:
    """The simulator's virtual camera (anything with ``read() -> frame``)."""

    def __init__(self, camera: Any, name: str = "virtual") -> None:
        self.camera = camera
        self.name = name
        self.live = True
        self.dropped = False  # tests set this to simulate a lost stream

    def open(self) -> None:
        self.dropped = False

    def read(self) -> Image | None:
        if self.dropped:
            return None
        return np.asarray(self.camera.read(), np.uint8)

    def close(self) -> None:
        pass


def open_source(
    spec: str,
    *,
    repeat: int = 1,
    seed: int = 0,
    open_timeout: float | None = None,
    read_timeout: float | None = None,
) -> FrameSource:
    """A frame source from a command-line string (see the module docstring).

    ``open_timeout`` and ``read_timeout`` are OpenCV's deadlines for a URL (seconds).
    """
    if spec == "virtual" or spec.startswith("virtual:"):
        from hwsim.camera.virtual import VirtualCamera

        level = spec.split(":", 1)[1] if ":" in spec else "easy"
        return VirtualCameraSource(VirtualCamera(level=level, seed=seed), spec)
    path = Path(spec)
    if path.is_dir():
        return ImageDirectorySource(path, repeat=repeat)
    # A device not there (not plugged in yet) is opened once it is, as one lost is.
    missing = "://" not in spec and not spec.isdigit() and not path.exists()
    if missing and not is_device_path(spec):
        raise VisionError(f"video source {spec!r}: no such file, directory or device")
    # A capture index, a device path and a URL are one kind of source, opened, given up
    # at their deadlines and reconnected alike (VideoCaptureSource.live).
    return VideoCaptureSource(
        int(spec) if spec.isdigit() else spec, open_timeout=open_timeout, read_timeout=read_timeout
    )
