"""An exclusive lock on a file, held by this process: one holder of a thing at a time.

``flock`` (non-blocking) on a lock file that holds the holder's pid, for the message of
whoever is refused. The kernel releases it when the process dies, ``kill -9`` included,
so a lock is never stale and the file is left in place. Used for one controller per
database (:meth:`studio.store.Database.exclusive`) and one process per device
(:mod:`drivers.run_lock`). Windows has no ``flock``: there it holds nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

if sys.platform != "win32":
    import fcntl


class FileLock:
    """The lock on ``path`` (created, with its directories, when first taken).

    ``follow=False``: a symbolic link at ``path`` is refused (``OSError``), not written
    through (a lock in a folder others could have written to).
    """

    def __init__(self, path: Path, *, follow: bool = True) -> None:
        self.path = path
        self._fd: int | None = None
        self._flags = os.O_RDWR | os.O_CREAT | (0 if follow else getattr(os, "O_NOFOLLOW", 0))

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> bool:
        """Take the lock; ``False`` at once if another process (or another open of the file
        in this one) holds it. Raises ``OSError`` when the file cannot be opened."""
        if self._fd is not None or sys.platform == "win32":
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, self._flags, 0o644)  # not inherited by children
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        with contextlib.suppress(OSError):  # who holds it: best effort
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # releases the flock

    def holder(self) -> int | None:
        """The pid the holder wrote in the file, if it can be read."""
        try:
            return int(self.path.read_text().strip())
        except (OSError, ValueError):
            return None
