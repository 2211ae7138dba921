"""``studio camera ...``: run the overhead cameras of a studio config."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from drivers.camera.runner import build_cameras, run_cameras
from drivers.cli import require_tables
from drivers.run_lock import run_locks
from drivers.state_dir import left_in_the_old_default, state_dir_of
from studio.config.camera_files import cameras as camera_devices
from studio.config.camera_files import unfed_virtual_cameras
from studio.errors import StudioError
from studio.process import fail, load_process_config, run_process

DEFAULT_STATE_DIR = Path("var/camera")  # in the config file's folder (drivers.state_dir)

app = typer.Typer(
    help="Overhead card cameras (recognise and publish every card).", no_args_is_help=True
)


@app.command("run")
def run(
    config: Path = typer.Option(..., "--config", "-c", help="studio TOML config"),
    table: list[str] = typer.Option(None, "--table", "-t", help="only these tables (repeatable)"),
    state_dir: Path | None = typer.Option(
        None,
        "--state-dir",
        help="last published seq per camera, so a restart continues the numbering; and each "
        "camera's run lock (a second process for a camera is refused) [default: var/camera "
        "in the config file's folder]",
        show_default=False,
    ),
) -> None:
    """Run every camera device of the config: frames in, one message per card placement out.

    Refused (exit 2) if another process runs any of them: with the same state dir, the
    same client id on the same broker, or the same camera (a device's real path, a URL;
    not a recording or ``virtual``), whatever state dir and client ids it was given."""
    settings = load_process_config(config)
    require_tables(settings, table, config)
    state = state_dir_of(config, state_dir, DEFAULT_STATE_DIR)
    if state_dir is None:
        ours = [(t, d.id) for _, t, d in camera_devices(settings, table or None)]
        moved = left_in_the_old_default(ours, state, DEFAULT_STATE_DIR)
        if moved is not None:
            fail(moved)
    try:
        # Built before anything starts: a missing file or option is refused at once.
        cameras = build_cameras(
            settings, tables=table or None, base_dir=config.parent, state_dir=state
        )
        if not cameras:
            raise StudioError("no camera device in the config (or in the tables asked for)")
    except StudioError as exc:
        fail(exc)

    async def main() -> None:
        logger = logging.getLogger(__name__)
        for warning in unfed_virtual_cameras(settings, table or None):
            logger.warning("%s", warning.removeprefix("warning: "))
        # Said once the run locks are taken: a refused run never says it is running.
        with run_locks(camera.run_lock for camera in cameras):
            logger.info(
                "running %d cameras via %s, state in %s", len(cameras), settings.broker.url, state
            )
            await run_cameras(cameras)

    run_process(main, name="cameras")


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio camera ...``."""
    root.add_typer(app, name="camera")
