"""``studio controller run``: the round controller with its console and streams."""

from __future__ import annotations

from pathlib import Path

import typer

from studio.process import load_process_config, run_process

app = typer.Typer(
    help="The round controller, its console, REST API, WebSocket and SSE.", no_args_is_help=True
)


@app.command("run")
def run(
    config: Path = typer.Option(..., "--config", "-c", help="studio TOML config"),
    after_restore: bool = typer.Option(
        False,
        "--after-restore",
        help=(
            "after restoring the database from a backup: a table whose event log ends "
            "before what the broker saw published goes on after the broker's seq and round "
            "(logged), instead of being refused; each table's last run, which a backup "
            "holds without its stop, is not taken for a kill (so a real one is not told: "
            "only for the start after a restore; docs/operations.md, Backups)"
        ),
    ),
) -> None:
    """Run the controller of every table of the config until SIGINT or SIGTERM."""
    from studio.controller.process import run_controller

    settings = load_process_config(config)
    # run_controller says "controller stopped" on any exit.
    run_process(
        lambda: run_controller(settings, after_restore=after_restore),
        name="controller",
        say_stopped=False,
    )


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio controller ...``."""
    root.add_typer(app, name="controller")
