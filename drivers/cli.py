"""``studio drivers ...``: run the serial device drivers of a studio config."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from drivers.run_lock import run_locks
from drivers.runner import build_drivers, run_drivers
from drivers.state import StateFile
from studio.errors import StudioError
from studio.process import fail, load_process_config, run_process

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
        help="last published seq per device, so a restart loses nothing; and each device's "
        "run lock (a second process for a device is refused)",
    ),
) -> None:
    """Run every shoe, shuffler and cut-card driver of the config in one process.

    Refused (exit 2) if another process runs any of them (same state dir)."""
    settings = load_process_config(config)

    async def main() -> None:
        drivers = build_drivers(settings, tables=table or None, state_dir=state_dir)
        if not drivers:
            raise StudioError("no shoe, shuffler or cutcard device in the config")
        # Said once every run lock is ours, so a refused run never claims to drive;
        # run_drivers finds them held and takes none twice.
        with run_locks(d.run_lock for d in drivers):
            logging.getLogger(__name__).info(
                "driving %d devices via %s", len(drivers), settings.broker.url
            )
            await run_drivers(drivers)

    run_process(main, name="drivers")


@app.command("forget-device")
def forget_device(
    table: str = typer.Option(..., "--table", "-t", help="table id"),
    device: str = typer.Option(..., "--device", "-d", help="device id (as in the config)"),
    state_dir: Path = typer.Option(Path("var/drivers"), "--state-dir", help="as for run"),
) -> None:
    """Clear the wire id a driver learned from its device, after replacing that device.

    Until then the driver refuses any other device on the port (a renumbered port may lead
    to another table's shoe). Takes effect at the driver's next connect attempt; the
    numbering continues past every seq already published. Safe while the driver runs:
    both change the file under its lock, and the driver keeps the mark."""
    state = StateFile.of_device(state_dir, table, device)
    assert state is not None
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


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio drivers ...``."""
    root.add_typer(app, name="drivers")
