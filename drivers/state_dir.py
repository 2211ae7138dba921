"""The default ``--state-dir`` of ``studio drivers run`` and ``studio camera run``: a
folder beside the config file, wherever the command starts (as a camera's files are
found). In the working directory (until 2026-12-05), a process started from another
folder found no state, numbered afresh, and re-used seqs that consumers dropped as
duplicates (a driver after a device reset; a camera at once)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from studio.errors import StudioError


def state_dir_of(config: Path, state_dir: Path | None, default: Path) -> Path:
    """``--state-dir`` as given, else ``default`` in ``config``'s folder; resolved, as it is
    said in messages (``.../wd/../etc/var/drivers`` read as a folder under the working one)."""
    chosen = state_dir if state_dir is not None else config.parent / default
    return chosen.resolve()


def left_in_the_old_default(
    devices: Iterable[tuple[str, str]], state_dir: Path, default: Path
) -> StudioError | None:
    """Refusal of a default state dir that lacks a device's state file which the old default
    (``default`` in the working directory) holds: taken, the numbering would restart."""
    old = default.resolve()
    if old == state_dir:
        return None
    left = [
        f"{table_id}/{device_id}"
        for table_id, device_id in devices
        if (old / f"{table_id}__{device_id}.json").exists()
        and not (state_dir / f"{table_id}__{device_id}.json").exists()
    ]
    if not left:
        return None
    return StudioError(
        f"the state of {', '.join(left)} is in {old} ({default} in the working directory, "
        f"the default until 2026-12-05) and not in the default state dir {state_dir} (beside "
        f"the config file): give --state-dir {old} to go on with it, or move its files there"
    )
