"""Writing a file whole or not at all: the studio's files that something else reads back
(a driver's state, a camera's calibration) are replaced, never rewritten in place."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so that a failure (a full disk, a kill, a power
    cut) leaves the old file or the new one, whole, never a file cut short.

    The text goes to a temporary file beside it (hidden, named by the process: two
    writers do not share one), reaches the disk, and is renamed over ``path``; the folder
    is synced so that the rename is on the disk too when this returns. A failure removes
    the temporary file and raises the :class:`OSError`. A symbolic link is followed (the
    file it names is replaced, the link kept), and a file replaced keeps its permissions.
    """
    target = path.resolve() if path.is_symlink() else path
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = None
    try:
        with tmp.open("w", encoding="utf-8") as file:
            if mode is not None:
                os.fchmod(file.fileno(), mode)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    folder = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
