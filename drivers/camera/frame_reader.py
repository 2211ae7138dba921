"""A frame source's reads in a thread of their own, so that a stalled read can be left behind.

A read blocked in a stalled stream (an RTSP or HTTP camera gone quiet, a hung USB camera)
cannot be cancelled. In the event loop's default executor it would hold one of its few
threads for ever, and ``asyncio.run`` waits for those threads when the process stops (a
camera service that could not be stopped). Here each camera session reads through one
daemon thread: the session waits for a frame with a deadline and, when the deadline
passes, gives the thread up; the thread ends as soon as its read returns, if ever.

    reader = FrameReader(source)
    frame = await reader.read()    # one frame (or None), read in the reader's thread
    reader.finish()                # the thread ends after the read in progress, if any
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from typing import Any

from drivers.camera.sources import FrameSource, Image

_Request = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Image | None]"]


class FrameReader:
    """Reads ``source`` one frame at a time, on request, in its own daemon thread."""

    def __init__(self, source: FrameSource) -> None:
        self.source = source
        self._requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, name=f"camera-read:{source.name}", daemon=True
        )
        self._thread.start()

    def read(self) -> asyncio.Future[Image | None]:
        """A future of the next frame; cancelling it drops the frame when it comes."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Image | None] = loop.create_future()
        self._requests.put((loop, future))
        return future

    def finish(self) -> None:
        """End the thread once the read in progress, if any, has returned."""
        self._requests.put(None)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _serve(self) -> None:
        while (request := self._requests.get()) is not None:
            loop, future = request
            try:
                frame = self.source.read()
            except Exception as exc:  # handed to the session, which decides
                _answer(loop, future, exc)
                continue
            _answer(loop, future, frame)


def _answer(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any) -> None:
    def settle() -> None:
        if future.done():  # given up (the deadline passed, or the camera stopped)
            return
        if isinstance(value, Exception):
            future.set_exception(value)
        else:
            future.set_result(value)

    # A loop closed since (RuntimeError) has nobody waiting for this frame any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)
