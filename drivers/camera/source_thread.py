"""A frame source's calls in one thread of its own, one call at a time.

An ``open()`` or a ``read()`` blocked in a stalled stream (an RTSP or HTTP camera that
accepts the connection and never answers, a stream gone quiet, a hung USB camera) cannot
be cancelled. In the event loop's default executor it would hold one of its few threads,
and ``asyncio.run`` waits for those threads when the process stops (a camera service
that could not be stopped). Here a camera service makes its source's calls through one
daemon thread for as long as it runs: it waits for a call with a deadline and, when the
deadline passes, gives the call up, but never makes another one beside it. The next
session waits for that call first (and uses it, if it was an open that succeeded late),
so a camera that stays stalled holds one thread, not one more per reconnect.

    thread = SourceThread(source)
    opened = thread.call("open")     # a future of source.open()'s outcome
    frame = await thread.call("read")
    thread.last                      # the last call, answered or not
    thread.finish(close=True)        # ends after the call in progress, closing the source
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Literal

from drivers.camera.sources import FrameSource, Image
from studio.errors import VisionError

_LOGGER = logging.getLogger(__name__)

CallKind = Literal["open", "read"]


@dataclass
class SourceCall:
    """One call into the source; ``future`` is its outcome (never cancelled by the service)."""

    kind: CallKind
    future: asyncio.Future[Any]
    claimed: bool = False  # an open a session went on to use (and will close)

    @property
    def done(self) -> bool:
        return self.future.done()


@dataclass(frozen=True)
class _Finish:
    close: bool


_Request = tuple[SourceCall, asyncio.AbstractEventLoop] | _Finish


class SourceThread:
    """Calls ``source.open()`` and ``source.read()`` in its own daemon thread, in turn."""

    def __init__(self, source: FrameSource) -> None:
        self.source = source
        self.last: SourceCall | None = None
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, name=f"camera-source:{source.name}", daemon=True
        )
        self._thread.start()

    @property
    def busy(self) -> bool:
        """A call has not been answered yet (it may be blocked)."""
        return self.last is not None and not self.last.done

    def call(self, kind: CallKind) -> SourceCall:
        """Start ``source.open()`` or ``source.read()`` in the thread; one call at a time."""
        if self.busy:
            raise VisionError(
                f"{self.source.name}: a {self.last and self.last.kind} is in progress"
            )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        # An outcome given up at its deadline may be an error nobody asks for any more.
        future.add_done_callback(_retrieve)
        call = SourceCall(kind, future)
        self.last = call
        self._requests.put((call, asyncio.get_running_loop()))
        return call

    def finish(self, *, close: bool = False) -> None:
        """End the thread after the call in progress, if any; ``close`` closes the source then
        (an open that returns after the service stopped must not leave a stream open)."""
        self._requests.put(_Finish(close))

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float) -> None:
        """Wait (blocking) up to ``timeout`` s for the thread to end after :meth:`finish`."""
        self._thread.join(timeout)

    def _serve(self) -> None:
        while True:
            request = self._requests.get()
            if isinstance(request, _Finish):
                if request.close:
                    try:
                        self.source.close()
                    except Exception:  # nobody is left to tell but the log
                        _LOGGER.exception("camera %s: closing after a late open", self.source.name)
                return
            call, loop = request
            try:
                value: Image | None = None
                if call.kind == "open":
                    self.source.open()
                else:
                    value = self.source.read()
            except Exception as exc:  # handed to the session, which decides
                _answer(loop, call.future, exc)
                continue
            _answer(loop, call.future, value)


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _answer(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], value: Any) -> None:
    def settle() -> None:
        if future.done():
            return
        if isinstance(value, Exception):
            future.set_exception(value)
        else:
            future.set_result(value)

    # A loop closed since (RuntimeError) has nobody waiting for this outcome any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)
