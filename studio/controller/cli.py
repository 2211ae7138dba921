"""``studio controller run``: the round controller with its console and streams."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import typer

from studio.config.loader import load_config
from studio.errors import StudioError

app = typer.Typer(
    help="The round controller, its console, REST API, WebSocket and SSE.", no_args_is_help=True
)


@app.command("run")
def run(config: Path = typer.Option(..., "--config", "-c", help="studio TOML config")) -> None:
    """Run the controller of every table of the config until SIGINT or SIGTERM."""
    from studio.controller.process import run_controller

    try:
        settings = load_config(config)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_controller(settings, stop)

    try:
        asyncio.run(main())
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio controller ...``."""
    root.add_typer(app, name="controller")
