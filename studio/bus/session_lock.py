"""One MQTT session per client id on this machine: a lock named by the broker and the id.

Two processes connecting to one broker with the same client id take the session from each
other in turn (MQTT lets the newer one in and drops the older), so each publishes its last
will for the other and neither gets its work done. The controller's database lock and the
devices' state-dir locks miss a second instance given another database or state dir (or
started from another folder, where the relative default paths lead elsewhere); this lock,
in one folder per user of the machine, does not. Two machines on one broker are not told
apart.

The folder is ``LIVESTUDIO_LOCK_DIR`` if set (the tests give each run its own; not a
``STUDIO_`` name, which the configuration reads as its own), else
``$TMPDIR/studio-run-locks-UID``: made private (0700) and used only if it is a real folder
of this user's that nobody else can write, since a lock file there is written (the holder's
pid), and another user's link in it would have us write through it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from studio.config.models import BrokerSettings
from studio.errors import BusError
from studio.filelock import FileLock

_LOGGER = logging.getLogger(__name__)

LOCK_DIR_VARIABLE = "LIVESTUDIO_LOCK_DIR"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})


def lock_dir() -> Path | None:
    """This user's folder of session locks; ``None`` (with a warning) if it is not safe."""
    configured = os.environ.get(LOCK_DIR_VARIABLE)
    uid = getattr(os, "getuid", lambda: 0)()
    folder = (
        Path(configured) if configured else Path(tempfile.gettempdir()) / f"studio-run-locks-{uid}"
    )
    try:
        folder.mkdir(mode=0o700, parents=bool(configured), exist_ok=True)
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and info.st_mode & 0o077:
            # Ours, made looser (by an earlier release, under the user's umask): tightened.
            os.chmod(folder, 0o700, follow_symlinks=False)
            info = os.lstat(folder)
    except OSError as exc:
        _LOGGER.warning("session locks: cannot use %s (%s)", folder, exc.strerror or exc)
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
        _LOGGER.warning(
            "session locks: %s is not a folder of this user's that only it can write: "
            "not used (a second instance of a device or controller is then not refused)",
            folder,
        )
        return None
    return folder


def session_lock_path(broker: BrokerSettings, client_id: str) -> Path | None:
    """Where the lock of ``client_id`` (without the prefix) on ``broker`` lies."""
    folder = lock_dir()
    if folder is None:
        return None
    host = "127.0.0.1" if broker.host.lower() in _LOCAL_HOSTS else broker.host.lower()
    name = f"{host}_{broker.port}__{broker.client_id_prefix}-{client_id}"
    return folder / (re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".run.lock")


def session_lock(broker: BrokerSettings, client_id: str) -> FileLock | None:
    """The lock (not taken yet) of ``client_id`` on ``broker``; ``None`` without a safe folder."""
    path = session_lock_path(broker, client_id)
    return FileLock(path, follow=False) if path is not None else None


@contextlib.contextmanager
def held_session(broker: BrokerSettings, client_id: str, what: str) -> Iterator[None]:
    """Hold the lock of ``client_id`` on ``broker`` while the block runs, or raise
    :class:`BusError` at once naming ``what`` holds it (another process of this machine).
    Without a safe folder, or a lock file that cannot be made, it goes on without it."""
    lock = session_lock(broker, client_id)
    try:
        taken = lock is None or lock.acquire()
    except OSError as exc:
        assert lock is not None
        _LOGGER.warning("session lock %s: %s: going on without it", lock.path, exc.strerror or exc)
        lock, taken = None, True
    if not taken:
        assert lock is not None
        pid = lock.holder()
        by = f"held by pid {pid}" if pid is not None else "held"
        raise BusError(
            f"another {what} on this machine uses client id "
            f"{broker.client_id_prefix}-{client_id} on broker {broker.host}:{broker.port} "
            f"(lock {lock.path} {by}): the two would take the broker session from each "
            "other; stop it first"
        )
    try:
        yield
    finally:
        if lock is not None:
            lock.release()
