"""Camera devices for tests: a FIFO fed a Y4M stream of a virtual camera's frames (OpenCV
reads it as it reads a camera) and a symbolic link re-pointed at once, as udev re-points a
``/dev/v4l/by-id/...`` link (shared by the device path tests)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import cv2

from hwsim.camera.virtual import VirtualCamera

SIZE = (320, 240)  # small frames: the FIFO's stream, not the recognition, is under test


class Feed:
    """Writes a Y4M stream of a virtual camera's frames into a FIFO, once per ``sessions``:
    once that session's ``start`` is set (the first one's is), when the camera opens the
    FIFO (the write open waits for it), frames until its ``end`` is set (then EOF: a camera
    unplugged) or the reader goes. A session starts when the test says so: written while
    the last reader still had the FIFO open, the new stream would go to that reader."""

    def __init__(self, fifo: Path, sessions: int = 1) -> None:
        self.fifo = fifo
        os.mkfifo(fifo)
        self.camera = VirtualCamera(level="easy", seed=5, size=SIZE)
        self.starts = [threading.Event() for _ in range(sessions)]
        self.starts[0].set()
        self.ends = [threading.Event() for _ in range(sessions)]
        self.opened = [threading.Event() for _ in range(sessions)]
        self.frames = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        width, height = SIZE
        header = f"YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg\n".encode()
        for start, end, opened in zip(self.starts, self.ends, self.opened, strict=True):
            start.wait()
            if self._stop.is_set():
                return
            try:
                with open(self.fifo, "wb") as stream:
                    if self._stop.is_set():
                        return
                    opened.set()
                    stream.write(header)
                    while not end.is_set() and not self._stop.is_set():
                        i420 = cv2.cvtColor(self.camera.read(), cv2.COLOR_BGR2YUV_I420)
                        stream.write(b"FRAME\n" + i420.tobytes())
                        stream.flush()
                        self.frames += 1
            except BrokenPipeError:
                pass  # the camera closed it
            if self._stop.is_set():
                return

    def close(self) -> None:
        """End the feed, and any open of the FIFO still waiting for the other side."""
        self._stop.set()
        for event in (*self.starts, *self.ends):
            event.set()
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(self.fifo, flags))
        self._thread.join(5)


def repoint(link: Path, target: Path | str) -> None:
    """Point ``link`` at ``target`` at once, as udev re-points a by-id link."""
    new = link.with_name(link.name + ".new")
    new.symlink_to(target)
    new.replace(link)
