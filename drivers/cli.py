"""``studio drivers ...``: run the serial device drivers of a studio config."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import typer

from drivers.runner import build_drivers, run_drivers
from studio.bus import broker_for, require_shared_broker
from studio.config.loader import load_config
from studio.errors import StudioError
from studio.signals import run_until_signalled

app = typer.Typer(
    help="Serial device drivers (card shoe, shuffler, cut-card sensor).", no_args_is_help=True
)


@app.command("run")
def run(
    config: Path = typer.Option(..., "--config", "-c", help="studio TOML config"),
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables (repeatable)"),
    state_dir: Path = typer.Option(
        Path("var/drivers"),
        "--state-dir",
        help="last published seq per device, so a restart loses nothing",
    ),
) -> None:
    """Run every shoe, shuffler and cut-card driver of the config in one process."""
    try:
        settings = load_config(config)
        require_shared_broker(settings.broker)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    async def main() -> None:
        async with broker_for(settings.broker) as broker:
            drivers = build_drivers(
                settings, broker=broker, tables=table or None, state_dir=state_dir
            )
            if not drivers:
                raise StudioError("no shoe, shuffler or cutcard device in the config")
            logging.getLogger(__name__).info("driving %d devices via %s", len(drivers), broker.url)
            await run_drivers(drivers)

    try:
        asyncio.run(run_until_signalled(main(), name="drivers"))
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio drivers ...``."""
    root.add_typer(app, name="drivers")
