"""What every long-running process (``studio controller|drivers|camera run``, ``studio
demo``) does alike.

It loads the config (a mistake is a clear message and exit status 2), logs to stderr,
and answers SIGINT, SIGTERM and SIGHUP (Ctrl-C; what a supervisor such as systemd sends;
the terminal or SSH session it was started from closed) one way, :class:`StopSignals` under
:func:`run_until_signalled`:

- the first signal cancels the work, whose ``async with`` blocks then shut down in order;
  but during a step the work runs whole (:meth:`StopSignals.whole`) the stop says what it
  waits for and cancels the work as soon as the step has ended, and once the work said it
  runs with a stop event of its own (:meth:`StopSignals.started`: the demo after its
  banner) the signal sets that event instead. A signal that came while the command was
  still loading (``studio.early_stop``) is taken as the first one as the loop starts: the
  work never begins. A stop still going after ``STOP_REPORT_AFTER`` says what it waits for;
- a second signal, wherever the process is (still loading, its start, a whole step, its
  stop, the rest of its life after that; its event loop blocked in a call, once the loop
  has read the first), ends it at once by the signal's own default action, with one line
  on stderr (``SIGINT again: stopping at once``; exit status 130 or 143 in a shell):
  the clean stop is not waited for, and what a kill leaves the next start handles (the
  controller tells and logs an unclean stop). SIGHUP is never a second signal: a hang-up
  sends two, and one after another stop signal is ignored (``studio.early_stop``).

Until 2026-12-07 the production processes took a second signal for another cancellation
of their work, which cut their clean stop at whatever it awaited (the controller logging
its tables' clean stops: those not logged read as killed at the next start) and was never
seen by a stop whose event loop was blocked, while ``studio demo`` had its own handling
(``studio.demo.stopping``), without the stop's report.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import linecache
import logging
import signal
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import typer

from studio import early_stop
from studio.bus import require_shared_broker
from studio.config.loader import load_config
from studio.config.models import StudioConfig
from studio.early_stop import stop_now
from studio.errors import StudioError

STOP_SIGNALS = early_stop.STOP_SIGNALS
_LOGGER = logging.getLogger(__name__)

# Libraries whose DEBUG records carry (or may carry) the secrets the studio handles:
# aiosqlite and SQLAlchemy log each statement with its parameters (a user's argon2 hash, a
# session's CSRF token); the others a connection's or request's traffic (a session cookie, a
# bearer token). They log at WARNING and above whatever ``log_level`` says. Until 2026-12-06
# a DEBUG log held both users' password hashes and the CSRF token after one console login
# and one user added.
QUIET_LOGGERS = (
    "aiosqlite",
    "sqlalchemy",
    "asyncpg",
    "websockets",
    "httpx",
    "httpcore",
    "multipart",
    "python_multipart",
)


def fail(exc: StudioError) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from exc


def load_process_config(path: Path) -> StudioConfig:
    """The config of a production process; they all meet on one shared broker."""
    try:
        config = load_config(path)
        require_shared_broker(config.broker)
    except StudioError as exc:
        fail(exc)
    configure_logging(config.log_level)
    return config


# The studio's own packages: ``log_level`` is theirs. Every other logger logs at INFO at the
# most detailed (DEBUG is not passed on to libraries): until 2026-12-07 the root logger
# took DEBUG too, and sse_starlette logged every chunk of every SSE stream, asyncio its
# own detail.
OWN_LOGGERS = ("studio", "drivers", "calibration", "hwsim")


def configure_logging(level: str) -> None:
    """Log to stderr: the ``OWN_LOGGERS`` at ``level``, other libraries at INFO at the most
    detailed, the ``QUIET_LOGGERS`` at WARNING at the most detailed."""
    wanted = logging.getLevelName(level)
    everyone = max(logging.INFO, wanted)
    logging.basicConfig(level=everyone, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in OWN_LOGGERS:
        # DEBUG their own; otherwise the root's level (NOTSET: a level set before is undone).
        logging.getLogger(name).setLevel(wanted if wanted < everyone else logging.NOTSET)
    quiet = max(logging.WARNING, wanted)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
    _LOGGER.debug(
        "logging at DEBUG for %s only; other libraries at INFO, %s at WARNING",
        ", ".join(OWN_LOGGERS),
        ", ".join(QUIET_LOGGERS),
    )


def run_process(
    work: Callable[[], Coroutine[Any, Any, None]],
    *,
    name: str,
    say_stopped: bool = True,
    signals: StopSignals | None = None,
) -> None:
    """Run ``work()`` until it ends or a stop signal (see the module); a ``StudioError``
    exits with status 2. ``signals``: those ``work`` runs its whole steps with.

    Stopped by a signal, it logs ``NAME stopped`` (``say_stopped=False``: ``work`` says it).
    A stop still going after twice ``STOP_REPORT_AFTER`` also dumps every thread's stack to
    stderr (``faulthandler``), for what the stop's own report cannot see: an event loop
    blocked in a call, or ``asyncio.run`` waiting for a worker thread at its end (no time
    limit on Python 3.11)."""
    try:
        stopped = asyncio.run(
            run_until_signalled(work(), name=name, on_stop=dump_threads_if_slow, signals=signals)
        )
        if stopped and say_stopped:
            _LOGGER.info("%s stopped", name)
    except StudioError as exc:
        fail(exc)
    except ExceptionGroup as group:
        # A task group (one task per device) wraps what one of its tasks raised; a
        # StudioError in it is still a clear message, anything else a bug to show in full.
        expected, rest = group.split(StudioError)
        if expected is None or rest is not None:
            raise
        fail(_first(expected))
    finally:
        faulthandler.cancel_dump_traceback_later()


def dump_threads_if_slow() -> None:
    """From now on (a stop), every thread's stack to stderr each twice ``STOP_REPORT_AFTER``
    until ``faulthandler.cancel_dump_traceback_later()``."""
    # (stderr with no file descriptor, as a test's captured stream: nothing to dump to)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        faulthandler.dump_traceback_later(2 * STOP_REPORT_AFTER, repeat=True)


def _first(group: BaseExceptionGroup[StudioError]) -> StudioError:
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error


# Seconds a stop may take before the tasks it still waits for are logged, with where each
# waits (and again each time as long again passes). A stop that never ended said nothing
# (a drivers process in a CI run of 2026-12-07: a cancellation lost in the bus; since fixed),
# and what it waited for was found only by reproducing it.
STOP_REPORT_AFTER = 15.0


class StopSignals:
    """How one process answers its stop signals (see the module); :func:`run_until_signalled`
    passes them on. The work uses it for its :meth:`whole` steps and to say it has
    :meth:`started` with a stop event of its own; a work that does neither is cancelled by
    the first signal."""

    def __init__(self) -> None:
        self.count = 0  # the stop signals that came
        self._task: asyncio.Task[Any] | None = None  # the work's task
        self._stop: asyncio.Event | None = None  # the work's own stop event, once started
        self._steps: list[str] = []  # the whole steps in progress, outermost first
        self._pending = False  # a signal came during a whole step: cancel after it
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """Whether a signal cancelled the work (not only set its stop event)."""
        return self._cancelled

    def signal(self, signum: int) -> None:
        """A stop signal came (from the event loop's handler)."""
        if self.count and signum == signal.SIGHUP:
            return  # (a hang-up's second SIGHUP: see studio.early_stop)
        self.count += 1
        if self.count > 1:
            stop_now(signum)
            return
        # The next one ends the process from the signal handler itself: a stop whose
        # event loop is blocked in a call (which then never reads its signals) included.
        for sig in STOP_SIGNALS:
            signal.signal(sig, _after_the_first(sig))
        if self._stop is not None:
            self._stop.set()
        elif self._steps:
            self._pending = True
            _LOGGER.warning("stopping once %s (a second signal stops at once)", self._steps[0])
        else:
            self._cancel()

    def _cancel(self) -> None:
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    @contextlib.contextmanager
    def whole(self, done: str) -> Iterator[None]:
        """Run the ``with`` body to its end whatever signal comes meanwhile (but a second,
        which ends the process); a signal that came cancels the work right after it
        (:class:`asyncio.CancelledError` here; the body's own error, if it raised, goes on
        and the work is cancelled all the same). ``done``: what the stop waits for, as said
        ("the controller has started"). Nested, the outermost step counts."""
        self._steps.append(done)
        try:
            yield
        except BaseException:
            self._steps.pop()
            # (A work that handled the body's error and went on kept running: the signal
            # was lost; a review.)
            if self._stop_after_step() and self._task is not None:
                self._task.cancel()
            raise
        self._steps.pop()
        if self._stop_after_step():
            # From the work's own task: raised here, nothing after the step runs. From a
            # task of its own (a task group's): the work is cancelled too.
            if self._task is not None and asyncio.current_task() is not self._task:
                self._task.cancel()
            raise asyncio.CancelledError

    def _stop_after_step(self) -> bool:
        """Whether a signal came during the outermost whole step, which has just ended: the
        work is then cancelled."""
        if self._steps or not self._pending:
            return False
        self._pending = False
        self._cancelled = True
        return True

    def serve(self, task: asyncio.Task[Any]) -> None:
        """``task`` is the work's: the one a signal cancels (:func:`run_until_signalled`)."""
        self._task = task

    def started(self, stop: asyncio.Event) -> None:
        """The work has started and stops itself once ``stop`` is set: a signal from now on
        sets it rather than cancelling the work. A work whose cancellation has not reached
        an ``await`` yet stops here."""
        if self._cancelled:
            raise asyncio.CancelledError
        self._stop = stop


def _stop_now_handler(signum: int, _frame: FrameType | None) -> None:
    stop_now(signum)


def _hangup_ignored(_signum: int, _frame: FrameType | None) -> None:
    """SIGHUP once stopping: nothing (a hang-up sends two; ``studio.early_stop``). A handler
    of its own rather than ``SIG_IGN``, which a program the process started would inherit."""


def _after_the_first(sig: int) -> Callable[[int, FrameType | None], None]:
    """The handler of ``sig`` once a stop signal came: another stops at once, but SIGHUP."""
    return _hangup_ignored if sig == signal.SIGHUP else _stop_now_handler


async def run_until_signalled(
    work: Coroutine[Any, Any, None],
    *,
    name: str,
    on_stop: Callable[[], None] | None = None,
    signals: StopSignals | None = None,
) -> bool:
    """Run ``work`` (as the task ``name``) until it ends or a stop signal stops it, the
    signals answered as ``signals`` says (see the module); ``True`` if a signal came.
    ``on_stop`` is called at the first stop signal.

    Then, its handlers still in place (a second signal still ends the process at once), it
    waits for the event loop's worker threads, as ``asyncio.run`` does at its end: a
    cancelled ``asyncio.to_thread`` call runs on (the demo's deck profile, about 2 s)."""
    signals = StopSignals() if signals is None else signals
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(work, name=name)
    signals.serve(task)
    waiting = asyncio.current_task()  # (this one: not listed by the stop's report)
    watchdog: asyncio.Task[None] | None = None

    def on_signal(signum: int) -> None:
        nonlocal watchdog
        signals.signal(signum)
        if watchdog is None:
            watchdog = loop.create_task(_watch_stop(task, waiting), name=f"{name}:stop-watchdog")
            if on_stop is not None:
                on_stop()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    if early_stop.take():  # stopped while it was starting: it never begins
        on_signal(signal.SIGINT)
    try:
        await task
    except asyncio.CancelledError:
        if not signals.cancelled:
            raise  # cancelled from outside: not ours to swallow
    finally:
        try:
            await loop.shutdown_default_executor()
        finally:
            # After a signal, a second one still ends the process for the rest of its life
            # (asyncio.run's end, the exit): the loop's removal puts back Python's defaults,
            # and one there was a KeyboardInterrupt traceback or exit 130 (a failure to
            # systemd: Restart=on-failure restarted a controller stopped by two). Held back
            # meanwhile: one between the removal and stop_now's handler met the default.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if signals.count else None
            try:
                for sig in STOP_SIGNALS:
                    loop.remove_signal_handler(sig)
                    if signals.count:
                        signal.signal(sig, _after_the_first(sig))
            finally:
                if held is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if watchdog is not None:
                watchdog.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watchdog
    return signals.count > 0


async def _watch_stop(work: asyncio.Task[None], waiting: asyncio.Task[Any] | None) -> None:
    """Every ``STOP_REPORT_AFTER`` seconds until ``work`` has stopped: log each task still
    running, with its stack. Only said: a stop's slow steps (a database that does not
    answer) have bounds of their own, and cancelling them again could cut one short."""
    waited = 0.0
    ours = {asyncio.current_task(), waiting}  # (not the stop's own tasks)
    while True:
        await asyncio.sleep(STOP_REPORT_AFTER)
        waited += STOP_REPORT_AFTER
        if work.done():
            return  # (ended in the same turn as this timer)
        running = [t for t in asyncio.all_tasks() if t not in ours and not t.done()]
        _LOGGER.warning(
            "%s: still stopping after %g s; waiting for %d tasks:\n%s",
            work.get_name(),
            waited,
            len(running),
            "\n".join(_where(t) for t in running),
        )


def _where(task: asyncio.Task[Any], limit: int = 16) -> str:
    """A task's name and where it waits: its coroutines' frames down the chain of awaits,
    innermost last (``Task.print_stack`` shows the task's own coroutine's frame alone on
    Python 3.11: a task stuck two awaits down was shown at its top line)."""
    lines = [f"- {task.get_name()}:"]
    awaiting: Any = task.get_coro()
    while awaiting is not None and len(lines) <= limit:
        frame = getattr(awaiting, "cr_frame", None) or getattr(awaiting, "gi_frame", None)
        if frame is None:
            break  # (a future's iterator: the innermost frame, above, awaits it)
        code = frame.f_code
        lines.append(f'    File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}')
        source = linecache.getline(code.co_filename, frame.f_lineno).strip()
        if source:
            lines.append(f"      {source}")
        awaiting = getattr(awaiting, "cr_await", None) or getattr(awaiting, "gi_yieldfrom", None)
    return "\n".join(lines)
