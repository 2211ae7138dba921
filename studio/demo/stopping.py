"""How a stop signal (Ctrl-C, SIGTERM) stops ``studio demo``, wherever it is.

Until the banner the demo is starting: a signal cancels its start, as ``studio controller
run`` is cancelled (``studio.process.run_until_signalled``), and what it had started shuts
down in order. A step that must not be cut in two (the rounds the last run left, cancelled
with their alerts; the manager's new password, which ends that user's sessions) is run
:meth:`StartGuard.whole` (the controller's start, cut, logs its own clean stops):
a signal during it stops the start as soon as it is done. From the banner on, a signal sets
the demo's ``stop`` event, and the demo stops its bots, drains its devices and records the
rounds in progress as interrupted. A second signal, in the start or in the stop, stops the
process at once, by the signal's own default action (as ``studio.early_stop`` does before
the event loop runs): a start or a stop stuck on something (a database that does not
answer) is then not waited for.

Until 2026-12-07 a signal only set the ``stop`` event, which the demo looked at after its
whole start: a Ctrl-C in its first second gave the full start first (3.9 to 5.9 s: the
banner, a new manager password, the last run's rounds cancelled), a second one was ignored,
and a start stuck on a database that accepted the connection and never answered went on
until the driver gave up (61 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Iterator

from studio.early_stop import STOP_SIGNALS

_LOGGER = logging.getLogger(__name__)


class StartGuard:
    """The demo's answer to stop signals: see the module. ``task`` is the demo's task (the
    start's steps run in it); ``stop`` the event the running demo waits on."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop
        self.task: asyncio.Task[object] | None = None
        self.signals = 0
        self._running = False  # the banner is out: a signal sets ``stop``
        self._cancelled = False  # the start was cancelled by a signal
        self._pending = False  # a signal came during a :meth:`whole` step
        self._steps: list[str] = []  # the :meth:`whole` steps in progress, outermost first

    @property
    def cancelled(self) -> bool:
        """Whether a signal cancelled the start."""
        return self._cancelled

    def signal(self, signum: int = signal.SIGINT) -> None:
        """A stop signal came (from the event loop's handler)."""
        self.signals += 1
        if self.signals > 1:
            stop_now(signum)
            return
        if self._running:
            self.stop.set()
        elif self._steps:
            self._pending = True
            _LOGGER.warning("stopping once %s (a second signal stops at once)", self._steps[0])
        else:
            self._cancel()

    def _cancel(self) -> None:
        self._cancelled = True
        if self.task is not None:
            self.task.cancel()

    @contextlib.contextmanager
    def whole(self, done: str) -> Iterator[None]:
        """Run the ``with`` body to its end whatever signal comes meanwhile; a signal that
        came stops the start right after it (:class:`asyncio.CancelledError` here), unless
        the body raised (its error ends the start anyway). ``done``: what the stop waits
        for, as said ("the controller has started")."""
        self._steps.append(done)
        try:
            yield
        finally:
            self._steps.pop()
        if not self._steps and self._pending:
            self._pending = False
            self._cancelled = True
            raise asyncio.CancelledError

    def started(self) -> None:
        """The start is over (the banner is next): a signal from now on sets ``stop``.
        A start whose cancellation has not reached an ``await`` yet stops here."""
        if self._cancelled:
            raise asyncio.CancelledError
        self._running = True


def stop_now(signum: int) -> None:
    """A second stop signal: end the process at once, by the signal's default action (no
    clean stop: what a kill leaves, the next start handles)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.write(f"{signal.Signals(signum).name} again: stopping at once\n")
        sys.stderr.flush()
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.raise_signal(signum)
