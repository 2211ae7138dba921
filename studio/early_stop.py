"""Stop signals that come while a long-running command is still starting.

``studio controller|drivers|camera run`` and ``studio demo`` install their stop handlers
once their event loop runs; importing the studio takes most of a second before that. A
Ctrl-C then raised ``KeyboardInterrupt`` somewhere in an import: a traceback (exit 130),
or, inside code that cannot raise (a callback of a compiled library), "Exception ignored"
and the process started all the same. So for those commands the signal is only noted
here, from the entry point's first lines on, and honoured as a clean stop once the
command runs (``take``). This module imports nothing heavy: it must load first.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The commands that run until stopped: (command, subcommand), or a command alone.
_LONG_RUNNING = {("controller", "run"), ("drivers", "run"), ("camera", "run"), ("demo",)}

_DEFAULTS: dict[int, Callable[[int, FrameType | None], object] | int] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
}

_noted: list[int] = []


def is_long_running(args: list[str]) -> bool:
    """Whether the command line ``args`` (without the program) runs until stopped."""
    words = [a for a in args if not a.startswith("-")][:2]
    return tuple(words) in _LONG_RUNNING or tuple(words[:1]) in _LONG_RUNNING


def defer() -> None:
    """Note stop signals from now on instead of raising ``KeyboardInterrupt``."""

    def note(signum: int, _frame: FrameType | None) -> None:
        if _noted:  # a second one: the start is stuck somewhere; stop now, as without this
            for sig in STOP_SIGNALS:
                signal.signal(sig, _DEFAULTS[sig])
            signal.raise_signal(signum)
            return
        _noted.append(signum)

    for sig in STOP_SIGNALS:
        signal.signal(sig, note)


def take() -> bool:
    """Whether a stop signal came while the command was starting (and forget it)."""
    came = bool(_noted)
    _noted.clear()
    return came
