"""A device's small state file: where its numbering was, so a restart continues it.

Consumers drop an event whose ``(device, seq)`` they have seen, so a driver or a
camera that started its numbering again after a restart would be ignored until it
caught up. Each keeps its last seq in ``STATE_DIR/{table}__{device}.json``, written
atomically (a crash leaves the old file or the new one, never half of one).

A serial driver's file has a second writer, ``studio drivers forget-device``, which
may run while the driver does: both read, change and write the file under an advisory
lock (:meth:`StateFile.locked`, ``flock`` on ``{file}.lock``), and the driver keeps a
``forgotten`` mark it finds there (:func:`wire_id_fields`), so neither write is lost.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from studio.atomic_file import replace_file

if sys.platform != "win32":
    import fcntl

_LOGGER = logging.getLogger(__name__)

# How long a read-modify-write waits for the other writer (who holds the lock for a few
# milliseconds): past it the lock holder is stuck (a stopped process), and the save fails
# (an OSError, retried by the driver) rather than stall the device.
LOCK_TIMEOUT = 10.0


class StateFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of_device(cls, state_dir: Path | None, table_id: str, device_id: str) -> StateFile | None:
        return cls(Path(state_dir) / f"{table_id}__{device_id}.json") if state_dir else None

    @property
    def lock_path(self) -> Path:
        # A sidecar, never removed: the state file itself is replaced on every save, so a
        # lock on it would be on a file no longer there.
        return self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def locked(self, timeout: float = LOCK_TIMEOUT, *, create: bool = True) -> Iterator[None]:
        """Hold the file's advisory lock (exclusive, across processes and threads) for a
        read-modify-write. Raises :class:`TimeoutError` (an ``OSError``) after ``timeout``.
        ``create=False`` makes no folder (a missing one is a ``FileNotFoundError``): a
        command that only looks must not leave a state dir where the drivers keep none.

        ``flock`` on Linux, the BSDs and macOS (local file systems; Linux emulates it on
        NFS). Windows has none: there this is a no-op, and ``forget-device`` is safe only
        with the driver stopped."""
        if sys.platform == "win32":
            yield
            return
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    # Polled, not blocking: a stuck holder must not hang the driver's save.
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(
                            f"{self.lock_path} still locked by another process after {timeout}s"
                        ) from None
                    time.sleep(0.01)
            yield
        finally:
            os.close(fd)  # releases the lock

    def load(self) -> dict[str, Any] | None:
        """The saved state; ``None`` when there is none or it cannot be read (logged)."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            _LOGGER.warning("ignoring unreadable state file %s: %s", self.path, exc)
            return None
        if not isinstance(data, dict):
            _LOGGER.warning("ignoring state file %s: not a JSON object", self.path)
            return None
        return data

    def save(self, data: dict[str, Any]) -> None:
        """Write the state so that a power cut leaves the old file or the new one, whole:
        the data reaches the disk before the rename, and the rename before we return (a
        file that came back empty or old was ignored, and a device reset meanwhile could
        then not be told: its new events dropped as duplicates)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(self.path, json.dumps(data))  # the CLI may write it too: by process


def wire_id_fields(
    ours: str | None, base: str | None, on_disk: dict[str, Any] | None
) -> dict[str, Any]:
    """The ``wire_id`` (and ``forgotten`` mark) a running driver writes, under the lock.

    ``ours`` is the driver's wire id now, ``base`` the one it last saved or loaded, and
    ``on_disk`` the file as it is. A driver that learned a device since (``ours`` is not
    ``base``) writes its own, which ends a mark. Otherwise the file's wins: an operator's
    ``forget-device`` since then (``wire_id`` cleared, ``forgotten`` set) stays until the
    driver acts on it, at its next connect to another device or its next start."""
    if ours != base or on_disk is None:
        return {"wire_id": ours}
    fields = {"wire_id": on_disk.get("wire_id")}
    if on_disk.get("forgotten") is not None:
        fields["forgotten"] = on_disk["forgotten"]
    return fields
