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
from studio.config.models import StudioConfig
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
    require_tables(settings, table, config)
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
        help="the --state-dir the drivers run with [default: var/drivers in the folder of "
        "--config, as for run]",
        show_default=False,
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="the studio TOML config the drivers run with (default: STUDIO_CONFIG): the "
        "device is checked against it, and without --state-dir the state dir is its default",
        show_default=False,
    ),
) -> None:
    """Clear the wire id a driver learned from its device, after replacing that device.

    Until then the driver refuses any other device on the port (a renumbered port may lead
    to another table's shoe). Takes effect at the driver's next connect attempt; the
    numbering continues past every seq already published. Safe while the driver runs:
    both change the file under its lock, and the driver keeps the mark. A device with no
    state file in the state dir is refused (exit 2): give the drivers' own --state-dir."""
    # Called as a function (the tests), an option left out is typer's default object.
    config = config if isinstance(config, Path) else None
    given = state_dir
    if state_dir is None:
        config = config or (
            Path(os.environ["STUDIO_CONFIG"]) if os.environ.get("STUDIO_CONFIG") else None
        )
        if config is None:
            fail(
                StudioError(
                    "give --state-dir DIR, the one the drivers run with, or --config FILE if "
                    "they run without one (the state dir is then var/drivers in its folder)"
                )
            )
    if config is not None:
        _require_configured(config, table, device)
    state_dir = state_dir_of(config or Path("."), given, DEFAULT_STATE_DIR)
    state = StateFile.of_device(state_dir, table, device)
    assert state is not None
    if not state.path.exists():
        # Looked for before the lock, which would create the folder and a lock file: in a
        # folder the drivers do not use (the default beside a config in /etc/studio, for
        # drivers run with --state-dir) that said "no learned wire id", exit 0, and the
        # device meant kept its id.
        fail(_no_state_file(state.path, table, device, default=given is None))
    try:
        # Under the file's lock, else a running driver's save between our read and write
        # is lost; create=False: the file was there, and a folder gone since is an error.
        with state.locked(create=False):
            if not state.path.exists():
                fail(_no_state_file(state.path, table, device, default=given is None))
            data = state.load()
            if data is None:
                fail(StudioError(f"{table}/{device}: cannot read the state file {state.path}"))
            if data.get("wire_id") is None:
                gone = data.get("forgotten")
                why = f"already forgot {gone!r}, " if gone is not None else ""
                typer.echo(
                    f"{table}/{device}: no learned wire id in {state.path} ({why}"
                    "the driver learns the device it next meets)"
                )
                return
            typer.echo(f"{table}/{device}: forgetting wire id {data['wire_id']!r} ({state.path})")
            # Kept until the driver learns the next device: another one is a replacement,
            # whose numbering and earlier events are not this table's.
            data["forgotten"], data["wire_id"] = data["wire_id"], None
            state.save(data)
    except OSError as exc:
        fail(StudioError(f"{table}/{device}: could not forget the wire id: {exc}"))


def _no_state_file(path: Path, table: str, device: str, *, default: bool) -> StudioError:
    """The refusal of a device without a state file at ``path``: where it looked, what is
    there, and the ``--state-dir`` to give (drivers run with one keep nothing beside the
    config)."""
    folder = path.parent
    if folder.is_dir():
        known = sorted(p.name.removesuffix(".json") for p in folder.glob("*__*.json"))
        there = "devices with a state there: " + (
            ", ".join(k.replace("__", "/", 1) for k in known) or "none"
        )
    else:
        there = "no such folder"
    where = "the default state dir, var/drivers beside the config; " if default else ""
    return StudioError(
        f"{table}/{device}: no state file {path} ({where}{there}): nothing forgotten; give "
        "the same --state-dir the drivers run with (docs/operations.md runs them with "
        "--state-dir /var/lib/studio/drivers)"
    )


def require_tables(settings: StudioConfig, asked: list[str] | None, config: Path) -> None:
    """Refuse (exit 2) a ``--table`` the config ``config`` does not have, naming it and the
    tables it has. ``drivers run`` and ``camera run`` filtered on it without a word: beside
    a valid one it was dropped (that table's devices undriven, a clean start log), alone
    it read "no ... device in the config"."""
    tables = [t.id for t in settings.tables]
    unknown = [t for t in dict.fromkeys(asked or []) if t not in tables]
    if unknown:
        which = ", ".join(repr(t) for t in unknown)
        fail(
            StudioError(
                f"no table{'s' if len(unknown) > 1 else ''} {which} in {config} "
                f"(tables: {', '.join(tables) or 'none'})"
            )
        )


def _require_configured(config: Path, table: str, device: str) -> None:
    """Refuse a table or device the config does not have (a typo said "nothing to forget",
    exit 0, and the device meant kept its wire id)."""
    try:
        settings = load_config(config)
    except StudioError as exc:
        fail(exc)
    require_tables(settings, [table], config)
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
