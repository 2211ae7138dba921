"""``studio config check FILE``: validate a configuration and explain every mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from studio.config.camera_files import camera_file_mistakes, cameras, unfed_virtual_cameras
from studio.config.loader import load_config, read_toml
from studio.config.models import StudioConfig
from studio.errors import ConfigError
from studio.store.database import IN_MEMORY, kept_nowhere, safe_url, url_holds_secret

config_app = typer.Typer(help="Configuration files.", no_args_is_help=True)

# Secrets belong in the environment (an EnvironmentFile readable by the service alone),
# never in a file that is copied, diffed and committed: (place in the file, variable).
_SECRETS = (
    (("broker", "password"), "STUDIO_BROKER__PASSWORD"),
    (("web", "platform_token"), "STUDIO_WEB__PLATFORM_TOKEN"),
    (("database", "checkpoint_key"), "STUDIO_DATABASE__CHECKPOINT_KEY"),
)


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def secrets_in_file(data: dict[str, Any]) -> list[str]:
    """A warning for each secret written in the file itself (their values never shown)."""
    warnings = [
        f"warning: {'.'.join(path)} is in the file: set it through {variable} instead"
        for path, variable in _SECRETS
        if _lookup(data, path) is not None
    ]
    url = _lookup(data, ("database", "url"))
    # A password in the user part or a query parameter (?password=..., ?sslpassword=...).
    if isinstance(url, str) and url_holds_secret(url):
        warnings.append(
            "warning: database.url holds a password in the file: "
            "set the whole URL through STUDIO_DATABASE__URL instead"
        )
    return warnings


def missing_ports(config: StudioConfig) -> list[str]:
    """A mistake for each shoe, shuffler or cut-card sensor without a port.

    The model allows it (the controller, and tests of it, need no port), but every
    process reads the same file and `studio drivers run` refuses such a device.
    """
    return [
        f"tables[{t}].devices[{d}]: a {device.kind} needs a port "
        "(/dev/ttyUSB0 or socket://host:port); studio drivers run refuses it without"
        for t, table in enumerate(config.tables)
        for d, device in enumerate(table.devices)
        if device.kind != "camera" and not device.port
    ]


def incomplete_cameras(config: StudioConfig) -> list[str]:
    """A mistake for each camera that `studio camera run` refuses whatever its files: no
    ``source``, no ``table`` calibration, or nothing to identify cards with (no ``deck``
    profile and ``barcodes = "off"``). Like a missing port, the model allows it."""
    mistakes = []
    for where, _, device in cameras(config):
        options = device.camera
        if options.source is None:
            mistakes.append(f"{where}.source: a camera needs one (0, a file, a URL)")
        if options.table is None:
            mistakes.append(f"{where}.table: a camera needs its table calibration")
        if options.deck is None and options.barcodes == "off":
            mistakes.append(f"{where}: nothing to identify cards with: give deck or barcodes")
    return mistakes


def unstable_ports(config: StudioConfig) -> list[str]:
    """A warning for each serial device that only its port tells apart: no ``wire_id`` and a
    port a reboot may renumber (``/dev/ttyUSB0``), so table A's driver could open table B's
    device. The driver learns the id on first contact (docs/devices.md 4.2), which helps
    only if the devices' ids differ."""
    return [
        f"warning: tables[{t}].devices[{d}] ({table.id}/{device.id}): no options.wire_id and "
        f"port {device.port} may be renumbered after a reboot; use /dev/serial/by-id/... "
        "or set wire_id"
        for t, table in enumerate(config.tables)
        for d, device in enumerate(table.devices)
        if device.kind != "camera"
        and device.port.startswith("/dev/")
        and not device.port.startswith(("/dev/serial/by-id/", "/dev/serial/by-path/"))
        and not device.options.get("wire_id")
    ]


def missing_files(config: StudioConfig, base_dir: Path) -> list[str]:
    """A mistake for each file a camera device names that cannot be read: its deck profile
    and its table calibration (or either is not a JSON object), a video file, folder or
    device as its source.

    Relative paths are from ``base_dir`` (the config file's folder), as `studio camera run`
    reads them; it refuses such a camera in the same words (``studio.config.camera_files``).
    """
    return [
        mistake
        for where, _, device in cameras(config)
        for mistake in camera_file_mistakes(where, device.camera, base_dir)
    ]


def no_tables(config: StudioConfig) -> list[str]:
    """A warning when there is no table: valid (the console and the audit commands need
    none), but the controller refuses to start."""
    if config.tables:
        return []
    return [
        "warning: no tables ([[tables]] in the file, or STUDIO_TABLES): "
        "studio controller run refuses to start without one"
    ]


@config_app.command("check")
def check(file: Path = typer.Argument(..., help="TOML configuration file")) -> None:
    """Validate FILE (plus STUDIO_* variables); print each mistake with its location.

    Exits 2 on a mistake; warns about secrets in the file; connects to nothing.
    """
    try:
        config = load_config(file)
        warnings = secrets_in_file(read_toml(file))
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    mistakes = [
        *([IN_MEMORY] if kept_nowhere(config.database.url) else []),
        *missing_ports(config),
        *incomplete_cameras(config),
        *missing_files(config, file.parent),
    ]
    if mistakes:
        typer.echo("\n".join(f"{file}: {mistake}" for mistake in mistakes), err=True)
        raise typer.Exit(2)
    for warning in [
        *warnings,
        *no_tables(config),
        *unstable_ports(config),
        *unfed_virtual_cameras(config),
    ]:
        typer.echo(warning, err=True)
    broker = config.broker.url or (
        "embedded (demo and tests only: controller/drivers/camera run need broker.url)"
    )
    devices = sum(len(t.devices) for t in config.tables)
    typer.echo(
        f"{file}: OK — {len(config.tables)} table(s), {devices} device(s), "
        f"broker {broker}, database {safe_url(config.database.url)}"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
