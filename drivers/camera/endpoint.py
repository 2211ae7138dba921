"""What a camera's source leads to on this machine: the name of its endpoint lock.

The state dir's lock and the session lock (:mod:`drivers.run_lock`) are named by the
camera's state dir and its MQTT client id: two ``studio camera run`` given other state dirs
and another ``client_id_prefix`` (or another table or device id) met neither, opened one
camera and both published its cards (a review). One camera looks at one table, so whatever
the two configs call it, it is run by one process: the camera's run lock also holds a lock
named by what its source leads to, in the folder and under the name a serial device's
endpoint lock has (:func:`camera_endpoint`).

- a device path (``/dev/video0``, ``/dev/v4l/by-id/...``): the device, every link resolved,
  as the camera opens it; the camera resolves the path again at each (re)open and its lock
  follows (:meth:`drivers.run_lock.RunLock.follow_port`, the device path given as its
  port), so a by-id link re-pointed after a USB re-enumeration moves both;
- a capture index ``N``: ``/dev/videoN`` resolved on Linux (OpenCV's V4L2 backend opens
  that), so ``0`` and ``/dev/video0`` are one camera; ``capture:N`` elsewhere;
- a URL (an IP camera, ``hwsim run --camera``'s MJPEG): scheme, host and port (the scheme's
  default if none; a loopback name as ``127.0.0.1``), path and query; the login is left
  out, in the user part and in the query alike (many IP cameras take it there:
  ``?usr=admin&pwd=...``): each query parameter whose name says it holds a secret
  (:func:`studio.url_secrets.is_secret_parameter`, the rule the database's URL is masked
  by) and a user name's (:data:`_LOGIN_NAMES`). Left out, not masked (``pwd=***``): a
  second login on one stream (another user, another password, the login in the user part
  or in the query, none at all) is the same camera, so what names it must not depend on
  the login; and a lock's message must not print a password. Until 2026-12-07 the query
  was kept whole, its password printed in a refusal. Other names of one host (a DNS
  alias, another address) and other streams of one camera (its main and sub stream) are
  not told apart;
- none for a recording (a regular file, a folder of frames, a ``file:`` URL of one) or the
  simulator's ``virtual`` camera: a recording is read, not taken, by any number of
  processes (tests and benchmarks replay one to several tables), and each process makes
  its own virtual camera.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from studio.config.camera_files import is_device_path, is_virtual_source
from studio.url_secrets import is_secret_parameter, query_items

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})
# A URL without a port is opened on its scheme's: one camera, with or without it written.
_DEFAULT_PORTS = {"http": 80, "https": 443, "rtsp": 554, "rtsps": 322, "rtmp": 1935}
# Query parameters that name the user an IP camera is logged in as (Foscam's ``usr``,
# the ``user`` of Dahua's and Amcrest's, ``loginuse`` of older ones): part of the login,
# not of the stream. A user name is no secret (messages show it): not the masking rule.
_LOGIN_NAMES = frozenset({"user", "usr", "username", "login", "loginuse"})


def camera_endpoint(source: str) -> str | None:
    """The endpoint of a camera's ``source`` as the camera opens it (see the module), or
    ``None`` for a source that is not taken by reading it (a recording, ``virtual``)."""
    if is_virtual_source(source):
        return None
    if source.isdigit():
        if sys.platform.startswith("linux"):
            return os.path.realpath(f"/dev/video{int(source)}")
        return f"capture:{int(source)}"
    if "://" in source:
        parts = urlsplit(source)
        if parts.scheme.lower() == "file":
            return _path_endpoint(unquote(parts.path))
        return _url_endpoint(parts)
    return _path_endpoint(source)


def _path_endpoint(path: str) -> str | None:
    # A device (a FIFO too: two readers would split it), also one not there for now (a USB
    # camera unplugged: still the device it was configured as); not a recording. The rule
    # the camera opens it by (is_device_path), not one of this module's own.
    return os.path.realpath(path) if is_device_path(path) else None


def _url_endpoint(parts: SplitResult) -> str:
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host in _LOOPBACK:
        host = "127.0.0.1"
    try:
        port = parts.port
    except ValueError:  # not a number: named as written, for the open to fail on
        port = None
    port = port or _DEFAULT_PORTS.get(scheme)
    name = f"[{host}]" if ":" in host else host
    netloc = f"{name}:{port}" if port is not None else name
    query = "&".join(
        item
        for item, key in query_items(parts.query)
        if not is_secret_parameter(key) and key.lower() not in _LOGIN_NAMES
    )
    return urlunsplit((scheme, netloc, parts.path or "/", query, ""))
