"""What every production process (``studio controller|drivers|camera run``) does alike.

It loads the config (a mistake is a clear message and exit status 2), logs to stderr,
and stops cleanly on SIGINT or SIGTERM (what a supervisor such as systemd sends): the
signal cancels its work, whose ``async with`` blocks then shut down in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import linecache
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, NoReturn

import typer

from studio import early_stop
from studio.bus import require_shared_broker
from studio.config.loader import load_config
from studio.config.models import StudioConfig
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
    work: Callable[[], Coroutine[Any, Any, None]], *, name: str, say_stopped: bool = True
) -> None:
    """Run ``work()`` until it ends or a stop signal; a ``StudioError`` exits with status 2.

    Stopped by a signal, it logs ``NAME stopped`` (``say_stopped=False``: ``work`` says it).
    A stop still going after twice ``STOP_REPORT_AFTER`` also dumps every thread's stack to
    stderr (``faulthandler``), for what the stop's own report cannot see: an event loop
    blocked in a call, or ``asyncio.run`` waiting for a worker thread at its end (no time
    limit on Python 3.11)."""

    def dump_threads_if_slow() -> None:
        # (stderr with no file descriptor, as a test's captured stream: nothing to dump to)
        with contextlib.suppress(AttributeError, OSError, ValueError):
            faulthandler.dump_traceback_later(2 * STOP_REPORT_AFTER, repeat=True)

    try:
        stopped = asyncio.run(run_until_signalled(work(), name=name, on_stop=dump_threads_if_slow))
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


def _first(group: BaseExceptionGroup[StudioError]) -> StudioError:
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error


# Seconds a stop may take before the tasks it still waits for are logged, with where each
# waits (and again each time as long again passes). A stop that never ended said nothing
# (a drivers process in a CI run of 2026-12-07: a cancellation lost in the bus; since fixed),
# and what it waited for was found only by reproducing it.
STOP_REPORT_AFTER = 15.0


async def run_until_signalled(
    work: Coroutine[Any, Any, None], *, name: str, on_stop: Callable[[], None] | None = None
) -> bool:
    """Run ``work`` until it ends or a stop signal cancels it; ``True`` if a signal did.
    ``on_stop`` is called at the first stop signal."""
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(work, name=name)
    waiting = asyncio.current_task()  # (this one: not listed by the stop's report)
    signalled = False
    watchdog: asyncio.Task[None] | None = None

    def stop() -> None:
        nonlocal signalled, watchdog
        signalled = True
        task.cancel()
        if watchdog is None:
            watchdog = loop.create_task(_watch_stop(task, waiting), name=f"{name}:stop-watchdog")
            if on_stop is not None:
                on_stop()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop)
    if early_stop.take():  # stopped while it was starting: it never begins
        stop()
    try:
        await task
    except asyncio.CancelledError:
        if not signalled:
            raise  # cancelled from outside: not ours to swallow
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        if watchdog is not None:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
    return signalled


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
