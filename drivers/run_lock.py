"""One process per device: a device's run lock, held for as long as a process serves it.

A second ``studio drivers run`` (or ``studio camera run``) on the same config would
open the same MQTT client ids, so the broker would knock the running instance's clients
off in turn, and publish ``offline`` for devices that work. So each device served gets
an exclusive, non-blocking ``flock`` on ``STATE_DIR/{table}__{device}.run.lock`` before
anything connects, kept until it stops; a device whose lock another process holds is
refused (:class:`DeviceBusyError`, naming the holder's pid, which the holder writes in
the file). The kernel releases a ``flock`` when its process dies, even by ``kill -9``,
so there is never a stale lock to remove, and the file itself is left in place.

It is not the state file's own lock (``{table}__{device}.json.lock``, taken for a few
milliseconds by each save and by ``forget-device``): that one must stay free while the
driver runs. Windows has no ``flock``: there the lock is a no-op.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

from studio.errors import StudioError
from studio.filelock import FileLock

_LOGGER = logging.getLogger(__name__)


class DeviceBusyError(StudioError):
    """A device is already served by another process (its run lock is held)."""


class RunLock:
    """The run lock of one device (``table_id``/``device_id``) in ``state_dir``."""

    def __init__(self, path: Path, table_id: str, device_id: str) -> None:
        self.path = path
        self.table_id = table_id
        self.device_id = device_id
        self._file = FileLock(path)

    @classmethod
    def of_device(cls, state_dir: Path | None, table_id: str, device_id: str) -> RunLock | None:
        """Beside the device's state file; none without a state dir (in-process use)."""
        if not state_dir:
            return None
        return cls(Path(state_dir) / f"{table_id}__{device_id}.run.lock", table_id, device_id)

    @property
    def held(self) -> bool:
        return self._file.held

    def acquire(self) -> None:
        """Take the lock, or raise :class:`DeviceBusyError` at once if another holds it.

        A state dir that cannot hold the lock file (not a directory, read-only) does not
        stop the device: it is served without the lock, as it is without its saved state
        (the driver reports that one as ``degraded``)."""
        try:
            taken = self._file.acquire()
        except OSError as exc:
            _LOGGER.warning(
                "%s of table %s: cannot take its run lock %s (%s): served without it",
                self.device_id,
                self.table_id,
                self.path,
                exc.strerror or exc,
            )
            return
        if not taken:
            raise DeviceBusyError(self._busy())

    def release(self) -> None:
        self._file.release()

    def holder(self) -> int | None:
        """The pid the holder wrote in the file, if it can be read."""
        return self._file.holder()

    def _busy(self) -> str:
        pid = self.holder()
        by = f"held by pid {pid}" if pid is not None else "held"
        return (
            f"{self.device_id} of table {self.table_id} is already run by another process "
            f"(lock {self.path} {by})"
        )


@contextlib.contextmanager
def run_locks(locks: Iterable[RunLock | None]) -> Iterator[None]:
    """Hold every lock while the block runs; if any is held elsewhere, take none and raise
    one :class:`DeviceBusyError` naming each such device."""
    taken: list[RunLock] = []
    busy: list[str] = []
    try:
        for lock in locks:
            if lock is None or lock.held:
                continue
            try:
                lock.acquire()
            except DeviceBusyError as exc:
                busy.append(str(exc))
            else:
                taken.append(lock)
        if busy:
            raise DeviceBusyError(
                "; ".join(busy) + f"; stop {'it' if len(busy) == 1 else 'them'} first"
            )
        yield
    finally:
        for lock in taken:
            lock.release()
