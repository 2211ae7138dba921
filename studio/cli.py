"""The ``studio`` command: one typer app, each bounded context adds its own commands."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="studio",
    help="Live-dealer blackjack studio controller.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Each context owns its commands in its own cli module; keep one line per context.
    # --- command registrations (one line each, keep sorted) ---
    pass


_register()


if __name__ == "__main__":  # pragma: no cover
    app()
