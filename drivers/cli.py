"""``studio drivers ...``: run the serial device drivers of a studio config."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import typer

from drivers.run_lock import run_locks
from drivers.runner import DRIVERS, build_drivers, run_drivers
from drivers.state import StateFile
from drivers.state_dir import left_in_the_old_default, state_dir_of
from studio.config import load_config
from studio.errors import StudioError
from studio.process import fail, load_process_config, run_process

app = typer.Typer(
    help="Serial device drivers (card shoe, shuffler, cut-card sensor).", no_args_is_help=True
)


DEFAULT_STATE_DIR = Path("var/drivers")  # in the config file's folder (drivers.state_dir)


@app.command("run")
def run(
    config: Path = typer.Option(..., "--config", "-c", help="studio TOML config"),
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables (repeatable)"),
    state_dir: Path | None = typer.Option(
        None,
        "--state-dir",
        help="last published seq per device, so a restart loses nothing; and each device's "
        "run lock (a second process for a device is refused) [default: var/drivers in the "
        "config file's folder]",
        show_default=False,
    ),
) -> None:
    """Run every shoe, shuffler and cut-card driver of the config in one process.

    Refused (exit 2) if another process runs any of them (same state dir)."""
    settings = load_process_config(config)
    state = state_dir_of(config, state_dir, DEFAULT_STATE_DIR)
    if state_dir is None:
        ours = [(t, d.id) for t, d in settings.devices(table or None) if d.kind in DRIVERS]
        moved = left_in_the_old_default(ours, state, DEFAULT_STATE_DIR)
        if moved is not None:
            fail(moved)

    async def main() -> None:
        drivers = build_drivers(settings, tables=table or None, state_dir=state)
        if not drivers:
            raise StudioError("no shoe, shuffler or cutcard device in the config")
        # Said once every run lock is ours, so a refused run never claims to drive;
        # run_drivers finds them held and takes none twice.
        with run_locks(d.run_lock for d in drivers):
            logging.getLogger(__name__).info(
                "driving %d devices via %s, state in %s", len(drivers), settings.broker.url, state
            )
            await run_drivers(drivers)

    run_process(main, name="drivers")


@app.command("forget-device")
def forget_device(
    table: str = typer.Option(..., "--table", "-t", help="table id"),
    device: str = typer.Option(..., "--device", "-d", help="device id (as in the config)"),
    state_dir: Path | None = typer.Option(
        None,
        "--state-dir",
        help="as for run [default: var/drivers in the folder of --config]",
        show_default=False,
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="the studio TOML config the drivers run with (default: STUDIO_CONFIG), for "
        "the default state dir",
        show_default=False,
    ),
) -> None:
    """Clear the wire id a driver learned from its device, after replacing that device.

    Until then the driver refuses any other device on the port (a renumbered port may lead
    to another table's shoe). Takes effect at the driver's next connect attempt; the
    numbering continues past every seq already published. Safe while the driver runs:
    both change the file under its lock, and the driver keeps the mark."""
    # Called as a function (the tests), an option left out is typer's default object.
    config = config if isinstance(config, Path) else None
    if state_dir is None:
        config = config or (
            Path(os.environ["STUDIO_CONFIG"]) if os.environ.get("STUDIO_CONFIG") else None
        )
        if config is None:
            fail(
                StudioError(
                    "give --config FILE (the state dir is then var/drivers in its folder, as "
                    "for drivers run) or --state-dir DIR"
                )
            )
        state_dir = state_dir_of(config, None, DEFAULT_STATE_DIR)
    if config is not None:
        _require_configured(config, table, device)
    state = StateFile.of_device(state_dir, table, device)
    assert state is not None
    if config is None and not state.path.exists():
        # No config to ask: a device without a state file is a typo as often as one that
        # never ran (a success said for a mistyped id left the right wire id learned).
        known = sorted(p.name.removesuffix(".json") for p in state_dir.glob("*__*.json"))
        there = ", ".join(k.replace("__", "/", 1) for k in known) or "none"
        fail(
            StudioError(
                f"{table}/{device}: no state file in {state_dir} (devices with a state there: "
                f"{there}); give --config FILE to check the device against the config"
            )
        )
    try:
        with state.locked():  # else a running driver's save between our read and write is lost
            data = state.load()
            if data is None or data.get("wire_id") is None:
                typer.echo(f"{table}/{device}: no learned wire id in {state.path}")
                return
            typer.echo(f"{table}/{device}: forgetting wire id {data['wire_id']!r} ({state.path})")
            # Kept until the driver learns the next device: another one is a replacement,
            # whose numbering and earlier events are not this table's.
            data["forgotten"], data["wire_id"] = data["wire_id"], None
            state.save(data)
    except OSError as exc:
        fail(StudioError(f"{table}/{device}: could not forget the wire id: {exc}"))


def _require_configured(config: Path, table: str, device: str) -> None:
    """Refuse a table or device the config does not have (a typo said "nothing to forget",
    exit 0, and the device meant kept its wire id)."""
    try:
        settings = load_config(config)
    except StudioError as exc:
        fail(exc)
    tables = [t.id for t in settings.tables]
    if table not in tables:
        fail(StudioError(f"no table {table!r} in {config} (tables: {', '.join(tables) or 'none'})"))
    devices = [d.id for d in settings.table(table).devices]
    if device not in devices:
        fail(
            StudioError(
                f"{table}/{device}: the device is not in the config {config}; the devices of {table}: "
                f"{', '.join(devices) or 'none'}"
            )
        )


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio drivers ...``."""
    root.add_typer(app, name="drivers")
