"""Stop signals that come while a long-running command is still starting.

``studio controller|drivers|camera run`` and ``studio demo`` install their stop handlers
once their event loop runs; importing the studio takes most of a second before that. A
Ctrl-C then raised ``KeyboardInterrupt`` somewhere in an import: a traceback (exit 130),
or, inside code that cannot raise (a callback of a compiled library), "Exception ignored"
and the process started all the same. So for those commands the signal is only noted
here, from the entry point's first lines on, and honoured as a clean stop once the
command runs (``take``). A second one ends the process at once, as a second signal does
wherever the command is (``stop_now``; ``studio.process``). This module imports nothing
heavy: it must load first.

SIGHUP (the terminal or SSH session the command was started from closed) is a stop signal
as SIGINT and SIGTERM are, but it never stops at once: a hang-up comes twice as a rule (the
shell passes its own on to its jobs, and the kernel sends the foreground job another as
the shell exits), and nobody is left to send a second one on purpose. A command started
with SIGHUP ignored (``nohup``, a supervisor that ignores it) keeps it ignored. Until
2026-12-07 SIGHUP was not handled: a hang-up killed the process, no clean stop.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from types import FrameType
from typing import NoReturn


def _stop_signals() -> tuple[signal.Signals, ...]:
    """SIGINT, SIGTERM, and SIGHUP unless the process started with it ignored (``nohup``)."""
    ignored = signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    return (signal.SIGINT, signal.SIGTERM, *(() if ignored else (signal.SIGHUP,)))


STOP_SIGNALS = _stop_signals()
# The commands that run until stopped: (command, subcommand), or a command alone.
_LONG_RUNNING = {("controller", "run"), ("drivers", "run"), ("camera", "run"), ("demo",)}

_noted: list[int] = []


def is_long_running(args: list[str]) -> bool:
    """Whether the command line ``args`` (without the program) runs until stopped."""
    words = [a for a in args if not a.startswith("-")][:2]
    return tuple(words) in _LONG_RUNNING or tuple(words[:1]) in _LONG_RUNNING


def defer() -> None:
    """Note stop signals from now on instead of raising ``KeyboardInterrupt``."""

    def note(signum: int, _frame: FrameType | None) -> None:
        if _noted and signum != signal.SIGHUP:  # a second one: the start is stuck somewhere
            stop_now(signum)
        _noted.append(signum)

    for sig in STOP_SIGNALS:
        signal.signal(sig, note)


def take() -> bool:
    """Whether a stop signal came while the command was starting (and forget it)."""
    came = bool(_noted)
    _noted.clear()
    return came


def stop_now(signum: int) -> NoReturn:
    """A second stop signal: end the process at once, by the signal's default action, with
    one line on stderr (no clean stop: what a kill leaves, the next start handles). Also
    called from a signal handler, amid any code."""
    # (From a signal handler, a write under way on the same stream raises RuntimeError.)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{signal.Signals(signum).name} again: stopping at once\n")
        sys.stderr.flush()
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.raise_signal(signum)
    raise SystemExit(128 + signum)  # (not reached: the default action ends the process)
