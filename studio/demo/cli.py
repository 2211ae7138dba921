"""``studio demo``: the product's front door."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import Any

import typer

from studio.demo.run import DemoOptions, run_demo
from studio.errors import StudioError


def demo(
    tables: int = typer.Option(4, "--tables", min=1, max=64, help="number of tables"),
    pace: float = typer.Option(
        0.6, "--pace", min=0.0, help="seconds between dealer actions (0 = as fast as possible)"
    ),
    seed: int = typer.Option(1, "--seed", help="same seed, same shoes and player choices"),
    broker: str | None = typer.Option(
        None, "--broker", help="mqtt://host:port (default: embedded)"
    ),
    database: str | None = typer.Option(
        None, "--database", help="sqlite:///PATH or postgresql://... (default: var/studio.db)"
    ),
    config: Path | None = typer.Option(None, "--config", help="configuration file"),
    faults: str = typer.Option("on", "--faults", help="on or off"),
    fault_rate: float = typer.Option(0.05, "--fault-rate", min=0.0, max=1.0),
    cameras: str = typer.Option(
        "on", "--cameras", help="on, or off: every table single-source (no camera cross-check)"
    ),
    auto_resolve: float | None = typer.Option(
        None, "--auto-resolve", help="resolve alerts after SECONDS (unattended demo)"
    ),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port"),
    log_level: str = typer.Option("WARNING", "--log-level"),
) -> None:
    """Run a live studio on this machine: simulated tables, players, faults and the console."""
    if faults not in ("on", "off"):
        raise typer.BadParameter("--faults is on or off")
    if cameras not in ("on", "off"):
        raise typer.BadParameter("--cameras is on or off")
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    options = DemoOptions(
        tables=tables,
        pace=pace,
        seed=seed,
        broker=broker,
        database=database,
        config=config,
        faults=faults == "on",
        fault_rate=fault_rate,
        camera=cameras == "on",
        auto_resolve=auto_resolve,
        host=host,
        port=port,
    )
    try:
        result = asyncio.run(_main(options))
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    rounds = ", ".join(f"{t} {n}" for t, n in result["rounds"].items())
    typer.echo(f"\nDemo stopped cleanly. Rounds per table: {rounds}")


async def _main(options: DemoOptions) -> dict[str, Any]:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await run_demo(options, stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
