"""The ``studio`` command: one typer app, each bounded context adds its own commands."""

from __future__ import annotations

import importlib
import sys

from studio import early_stop

if early_stop.is_long_running(sys.argv[1:]):
    early_stop.defer()  # before the imports below: most of a second

import typer

app = typer.Typer(
    name="studio",
    help="Live-dealer blackjack studio controller.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

# Each context owns its commands in its own cli module, which defines ``register(app)``.
# To add commands: add ONE line here with your module (keep sorted).
_CONTEXTS = [
    "calibration.cli",
    "drivers.camera.cli",
    "drivers.cli",
    "studio.certification.cli",
    "studio.config.cli",
    "studio.console.cli",
    "studio.controller.cli",
    "studio.demo.cli",
    "studio.rules.cli",
    "studio.store.cli",
]


def _register() -> None:
    for name in _CONTEXTS:
        importlib.import_module(name).register(app)


_register()


if __name__ == "__main__":  # pragma: no cover
    app()
