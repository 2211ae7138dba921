"""``studio camera ...``: run the overhead cameras of a studio config."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import typer

from drivers.camera.runner import build_cameras, run_cameras
from studio.bus import broker_for, require_shared_broker
from studio.config.loader import load_config
from studio.errors import StudioError
from studio.signals import run_until_signalled

app = typer.Typer(
    help="Overhead card cameras (recognise and publish every card).", no_args_is_help=True
)


@app.command("run")
def run(
    config: Path = typer.Option(..., "--config", "-c", help="studio TOML config"),
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables (repeatable)"),
    state_dir: Path = typer.Option(
        Path("var/camera"),
        "--state-dir",
        help="last published seq per camera, so a restart continues the numbering",
    ),
) -> None:
    """Run every camera device of the config: frames in, one message per card placement out."""
    try:
        settings = load_config(config)
        require_shared_broker(settings.broker)
        cameras = build_cameras(
            settings, tables=table or None, base_dir=config.parent, state_dir=state_dir
        )
        if not cameras:
            raise StudioError("no camera device in the config (or in the tables asked for)")
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    async def main() -> None:
        async with broker_for(settings.broker) as broker:
            for camera in cameras:
                camera.broker = broker
            logging.getLogger(__name__).info("running %d cameras via %s", len(cameras), broker.url)
            await run_cameras(cameras)

    try:
        asyncio.run(run_until_signalled(main(), name="cameras"))
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio camera ...``."""
    root.add_typer(app, name="camera")
