"""The ``studio`` command: one typer app, each bounded context adds its own commands."""

from __future__ import annotations

import importlib
import sys

from studio import early_stop

if early_stop.is_long_running(sys.argv[1:]):
    early_stop.defer()  # before the imports below: most of a second

import typer

# Each context owns its commands in its own cli module, which defines ``register(app)``.
# To add commands: add the module here with the command names it registers (keep sorted).
_CONTEXTS: dict[str, tuple[str, ...]] = {
    "calibration.cli": ("calibrate", "recognise"),
    "drivers.camera.cli": ("camera",),
    "drivers.cli": ("drivers",),
    "studio.certification.cli": ("rtp", "shoe-stats"),
    "studio.config.cli": ("config",),
    "studio.console.cli": ("users",),
    "studio.controller.cli": ("controller",),
    "studio.demo.cli": ("demo",),
    "studio.rules.cli": ("replay",),
    "studio.store.cli": ("audit",),
}


def _root() -> None:
    """(A callback, so that an app holding one context's commands stays a group: typer
    runs a lone command as the program itself.)"""


def build(contexts: list[str] | None = None) -> typer.Typer:
    """The ``studio`` app with the commands of ``contexts`` (cli modules; default: all)."""
    built = typer.Typer(
        name="studio",
        help="Live-dealer blackjack studio controller.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    built.callback()(_root)
    for name in contexts if contexts is not None else list(_CONTEXTS):
        importlib.import_module(name).register(built)
    return built


def contexts_for(args: list[str]) -> list[str] | None:
    """The one cli module whose commands ``args`` (without the program) asks for, or None
    (all: help, a mistyped command, whose message lists them all)."""
    words = [a for a in args if not a.startswith("-")][:1]
    for name, commands in _CONTEXTS.items():
        if words and words[0] in commands:
            return [name]
    return None


def main() -> None:
    """The ``studio`` program. Imports only the context whose command is run: importing
    all of them took about 1.2 s of every start (OpenCV, FastAPI, the demo), twice what
    ``studio controller run`` or ``studio drivers run`` needs of it."""
    build(contexts_for(sys.argv[1:]))()


def __getattr__(name: str) -> typer.Typer:
    # ``from studio.cli import app`` (tests, docs' examples): the app with every command,
    # built on first use.
    if name == "app":
        app = build()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
