"""One process per device: a device's run lock, held for as long as a process serves it.

A second ``studio drivers run`` (or ``studio camera run``) on the same config would
open the same MQTT client ids, so the broker would knock the running instance's clients
off in turn, and publish ``offline`` for devices that work. So each device served gets
an exclusive, non-blocking ``flock`` on ``STATE_DIR/{table}__{device}.run.lock`` before
anything connects, kept until it stops; a device whose lock another process holds is
refused (:class:`DeviceBusyError`, naming the holder's pid, which the holder writes in
the file). The kernel releases a ``flock`` when its process dies, even by ``kill -9``,
so there is never a stale lock to remove, and the file itself is left in place.

The state dir is relative to the working directory by default, so a second instance run
from another folder would find its own lock free: a second lock, for this machine, is
named by the broker and the MQTT client id (:mod:`studio.bus.session_lock`). Neither
stops a second instance given another ``client_id_prefix`` and another state dir: a third
lock, in the same folder of this machine, is named by the device's endpoint (the port
path with every link resolved, or ``socket://host:port``; :func:`endpoint_of`). A TCP
serial server (ser2net, the simulator) serves whichever client connected last, so two
such instances took the link from each other, RESEND filled in, and every card went out
twice under two seq ranges (a review). That lock follows the port: a link re-pointed
while the driver runs (the simulator's pty after a replug, ``/dev/serial/by-id/...`` after
a USB re-enumeration) moves it to the new target as the driver reopens the port
(:meth:`RunLock.follow_port`). A camera whose source is a device path gives that path as
its port, followed the same way at each reopen; any other camera (a capture index, a URL)
names its endpoint itself (:mod:`drivers.camera.endpoint`), in the same folder under the
same name, so a camera and a serial driver given one device path meet too.

It is not the state file's own lock (``{table}__{device}.json.lock``, taken for a few
milliseconds by each save and by ``forget-device``): that one must stay free while the
driver runs. Windows has no ``flock``: there the lock is a no-op.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from studio.bus.session_lock import lock_dir, session_lock
from studio.config.models import BrokerSettings
from studio.errors import StudioError
from studio.filelock import FileLock

_LOGGER = logging.getLogger(__name__)


class DeviceBusyError(StudioError):
    """A device is already served by another process (its run lock is held)."""


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})


def endpoint_of(port: str) -> str:
    """What a device's ``port`` leads to on this machine, as one string: a device path with
    every symbolic link resolved (``/dev/serial/by-id/...`` and ``/dev/ttyUSB0`` are one
    device; a relative path is from the working directory, as the port is opened), or
    ``socket://host:port`` with a loopback name as ``127.0.0.1``. Other names of one host
    (a DNS alias, another address of it) are not told apart."""
    if port.startswith("socket://"):
        parts = urlsplit(port)
        host = (parts.hostname or "").lower()
        try:
            number = parts.port
        except ValueError:
            number = None
        return f"socket://{'127.0.0.1' if host in _LOOPBACK else host}:{number}"
    return os.path.realpath(port)


def endpoint_lock_path(port: str) -> Path | None:
    """This machine's lock of the device at ``port`` (:func:`endpoint_of`), in this user's
    folder of session locks; ``None`` without a safe folder."""
    return _endpoint_lock_path(endpoint_of(port))


def _endpoint_lock_path(endpoint: str) -> Path | None:
    # Named by a hash: an endpoint holds characters (``/``, ``:``) a file name cannot.
    folder = lock_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:24]
    return folder / f"device-{digest}.run.lock"


class RunLock:
    """The run lock of one device (``table_id``/``device_id``) in ``state_dir``.

    With ``machine`` also the lock for this machine named by the broker and the MQTT client
    id (:mod:`studio.bus.session_lock`): a second instance run from another folder (or with
    another ``--state-dir``) finds no lock in its own state dir, but would take over the
    same client ids on the same broker all the same.
    """

    def __init__(
        self,
        path: Path,
        table_id: str,
        device_id: str,
        machine: FileLock | None = None,
        *,
        port: str | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.path = path
        self.table_id = table_id
        self.device_id = device_id
        self.port = port
        self._files = [FileLock(path)] + ([machine] if machine is not None else [])
        self._machine = machine
        # The endpoint's lock, taken last (a refusal names the state dir's or the session's
        # lock first, as before): whatever else differs, one device, one process.
        # What the port led to when that lock was made (None: to be looked at again). A
        # device with no port to follow (a camera) names its endpoint itself.
        self._endpoint_name = endpoint_of(port) if port else endpoint
        where = _endpoint_lock_path(self._endpoint_name) if self._endpoint_name else None
        self._endpoint = FileLock(where, follow=False) if where is not None else None
        if self._endpoint is not None:
            self._files.append(self._endpoint)
        self._taken: list[FileLock] = []
        # Between acquire and release (``held`` is not: the locks that could not be made,
        # served without, are not in ``_taken``).
        self._acquired = False

    @classmethod
    def of_device(
        cls,
        state_dir: Path | None,
        table_id: str,
        device_id: str,
        *,
        broker: BrokerSettings | None = None,
        client_id: str | None = None,
        port: str | None = None,
        endpoint: str | None = None,
    ) -> RunLock | None:
        """Beside the device's state file (and, given its broker and client id, and its
        port or its ``endpoint``, for the machine); none without a state dir (in-process
        use). ``endpoint``: what a device without a port leads to, as one string (a
        camera's capture index or URL, :func:`drivers.camera.endpoint.camera_endpoint`);
        not followed (a camera's device path is given as its ``port``)."""
        if not state_dir:
            return None
        machine = session_lock(broker, client_id) if broker and client_id else None
        path = Path(state_dir) / f"{table_id}__{device_id}.run.lock"
        return cls(path, table_id, device_id, machine, port=port, endpoint=endpoint)

    @property
    def held(self) -> bool:
        return bool(self._taken)

    def acquire(self) -> None:
        """Take the locks, or raise :class:`DeviceBusyError` at once if another holds one.

        A lock that cannot be made (a state dir that is not a directory, read-only) does not
        stop the device: it is served without that lock, as it is without its saved state
        (the driver reports that one as ``degraded``)."""
        for lock in self._files:
            try:
                taken = lock.acquire()
            except OSError as exc:
                self._served_without(lock, exc)
                continue
            if not taken:
                self.release()
                raise DeviceBusyError(self._busy(lock))
            self._taken.append(lock)
        self._acquired = True

    def _served_without(self, lock: FileLock, exc: OSError) -> None:
        _LOGGER.warning(
            "%s of table %s: cannot take its run lock %s (%s): served without it",
            self.device_id,
            self.table_id,
            lock.path,
            exc.strerror or exc,
        )

    def release(self) -> None:
        self._acquired = False
        while self._taken:
            self._taken.pop().release()

    def follow_port(self) -> None:
        """Called as the driver (re)opens the port, while the locks are held: if the port now
        leads elsewhere (a link re-pointed: a replugged pty, ``/dev/serial/by-id/...`` after
        a USB re-enumeration), the endpoint lock moves to the new target. The old one is
        let go first, come what may: this process no longer uses that device, and holding
        it refused another process whose port leads there now (a review), while the new
        target was not locked at all. Raises :class:`DeviceBusyError` if another process
        holds the new target's lock: the port must not be opened (asked again at the next
        open, so the lock is taken once that process lets go)."""
        if not self.port or self._endpoint is None or not self._acquired:
            return  # no endpoint lock (no safe folder), or not run under its locks
        if not self.port.startswith("socket://") and not os.path.exists(self.port):
            # A link with nothing behind it for now (a pty being replaced, a USB device
            # unplugged): the open fails anyway, and the device's lock is kept; given up,
            # another process could take it and refuse this one its own device (a review).
            return
        name = endpoint_of(self.port)
        if name == self._endpoint_name:
            return
        path = _endpoint_lock_path(name)
        if path is None:
            return
        old, lock = self._endpoint, FileLock(path, follow=False)
        if old in self._taken:
            self._taken.remove(old)
            old.release()
            _LOGGER.info(
                "%s of table %s: its port %s now leads to %s (was %s): its lock moves there",
                self.device_id,
                self.table_id,
                self.port,
                name,
                self._endpoint_name,
            )
        self._files[self._files.index(old)] = lock
        self._endpoint, self._endpoint_name = lock, name
        try:
            taken = lock.acquire()
        except OSError as exc:
            self._served_without(lock, exc)
            return
        if not taken:
            busy = self._busy(lock)
            self._endpoint_name = None  # not ours: tried again at the next open
            raise DeviceBusyError(busy)
        self._taken.append(lock)

    def holder(self) -> int | None:
        """The pid the holder of the state dir's lock wrote in the file, if it can be read."""
        return self._files[0].holder()

    def _busy(self, lock: FileLock) -> str:
        pid = lock.holder()
        by = f"held by pid {pid}" if pid is not None else "held"
        same = ""
        if lock is self._endpoint and self._endpoint_name:
            same = f", the same device {self._endpoint_name}"
        elif lock is self._machine:
            same = ", the same broker and MQTT client id"
        return (
            f"{self.device_id} of table {self.table_id} is already run by another process "
            f"(lock {lock.path} {by}{same})"
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
