"""``studio config check FILE``: validate a configuration and explain every mistake."""

from __future__ import annotations

from pathlib import Path

import typer

from studio.config.loader import load_config
from studio.errors import ConfigError
from studio.store.database import safe_url

config_app = typer.Typer(help="Configuration files.", no_args_is_help=True)


@config_app.command("check")
def check(file: Path = typer.Argument(..., help="TOML configuration file")) -> None:
    """Validate FILE (plus STUDIO_* variables); print each mistake with its location."""
    try:
        config = load_config(file)
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    broker = config.broker.url or "embedded broker"
    devices = sum(len(t.devices) for t in config.tables)
    typer.echo(
        f"{file}: OK — {len(config.tables)} table(s), {devices} device(s), "
        f"broker {broker}, database {safe_url(config.database.url)}"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
