"""The files a camera device's options name, read the one way for every command.

``studio config check`` and ``studio camera run`` both read a camera's deck profile, table
calibration and source path through these functions, so that a mistake is worded alike by
both: the config key (``tables[0].devices[3].options.deck``, by position as in the file)
and the path it resolves to (a relative one is from the config file's folder).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from studio.config.models import CameraOptions, DeviceSettings, StudioConfig
from studio.errors import ConfigError, StudioError

T = TypeVar("T")

_RELATIVE = " (a relative path is from the config file's folder)"


def cameras(
    config: StudioConfig, tables: Iterable[str] | None = None
) -> Iterator[tuple[str, str, DeviceSettings]]:
    """(options key, table id, device) of each camera of the tables named (all by default);
    the key counts the file's tables and devices, as ``config check`` names every mistake."""
    wanted = set(tables) if tables is not None else None
    for t, table in enumerate(config.tables):
        if wanted is not None and table.id not in wanted:
            continue
        for d, device in enumerate(table.devices):
            if device.kind == "camera":
                yield f"tables[{t}].devices[{d}].options", table.id, device


def resolved_path(path: Path) -> Path:
    """``path`` as it is said in a message: absolute, with its ``..`` and links resolved
    (``../etc/deck.json`` read as from the working folder, not the config's); as given if
    it cannot be (a NUL in it, a loop of links), for its own mistake to name."""
    try:
        return path.resolve()
    except (OSError, ValueError, RuntimeError):
        return path


def _relative_note(configured: Path | str) -> str:
    return "" if Path(configured).is_absolute() else _RELATIVE


def _read_json_object(path: Path, configured: Path | str) -> dict[str, Any]:
    """The JSON object in ``path``; :class:`ConfigError` saying why not, naming ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"no such file: {path}{_relative_note(configured)}") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"{path} is a folder, not a file") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON (not UTF-8 text: {exc.reason})") from exc
    except ValueError as exc:  # a NUL character in the path
        raise ConfigError(f"not a usable path: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return data


def load_camera_file(
    key: str, configured: Path | str, base_dir: Path, parse: Callable[[dict[str, Any]], T]
) -> T:
    """``parse`` of the JSON file that option ``key`` names (``configured``, relative to
    ``base_dir``); any mistake raises :class:`ConfigError` starting ``KEY: ``."""
    path = resolved_path(base_dir / configured)
    try:
        data = _read_json_object(path, configured)
    except ConfigError as exc:
        raise ConfigError(f"{key}: {exc}") from exc
    try:
        return parse(data)
    except StudioError as exc:  # the content: VisionError from the calibration's from_dict
        raise ConfigError(f"{key}: {path}: {exc}") from exc


def is_virtual_source(source: str) -> bool:
    """The simulator's virtual camera (``virtual``, ``virtual:hard``)."""
    return source == "virtual" or source.startswith("virtual:")


def is_path_source(source: str) -> bool:
    """A file, folder or device path, as against a capture index, a URL or the simulator."""
    return not (is_virtual_source(source) or source.isdigit() or "://" in source)


def unfed_virtual_cameras(config: StudioConfig, tables: Iterable[str] | None = None) -> list[str]:
    """A warning for each ``virtual`` camera of a cross-checked table: a layout of its own
    that no shoe deals to, so the controller would see every card the shoe deals go
    unseen (a ``misscan`` each). ``hwsim run --camera`` serves one in step with its shoe."""
    cross_checked = {table.id for table in config.tables if not table.single_source}
    return [
        unfed_virtual_camera(key, table_id, device.camera.source or "")
        for key, table_id, device in cameras(config, tables)
        if table_id in cross_checked and is_virtual_source(device.camera.source or "")
    ]


def unfed_virtual_camera(key: str, table_id: str, source: str) -> str:
    """The warning of ``unfed_virtual_cameras`` for the camera whose options are at ``key``."""
    return (
        f"warning: {key}.source: {source!r} is a simulated camera that no shoe "
        f"deals to: every card dealt at table {table_id} would be a misscan; for a simulated "
        "table use `hwsim run --camera` (its --config-out writes the camera)"
    )


def _under_dev(path: str) -> bool:
    return path.startswith("/dev/")


def is_device_path(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a camera device (a stream to open again when it goes, and
    waited for while it is not there), not a recording: there and neither a regular file
    nor a folder (a character device such as ``/dev/video0``, a link to one, a FIFO), or
    not there but under ``/dev``, named so or by what its links lead to as far as they go
    (``/dev/v4l/by-id/...`` before udev makes it: a USB camera not plugged in yet, a
    link of one's own to it). A path not there anywhere else is a recording misspelt.

    The one rule: ``studio camera run`` and ``config check`` wait for (and warn of) such
    a path missing, the camera opens it as a live source (:mod:`drivers.camera.sources`)."""
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # a NUL in it: no path at all
        return False
    except OSError:
        # Links followed as far as they go: a dangling link's last target.
        return _under_dev(os.path.abspath(path)) or _under_dev(os.path.realpath(path))
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def camera_source(key: str, source: str, base_dir: Path) -> str:
    """The source as the camera opens it: a path made relative to ``base_dir`` and checked
    to be there (else :class:`ConfigError` starting ``KEY: ``), unless it names a device
    (:func:`is_device_path`: not plugged in yet, waited for as a camera lost); others as
    given."""
    if not is_path_source(source):
        return source
    path = resolved_path(base_dir / source)
    try:
        path.stat()
    except FileNotFoundError as exc:
        # A camera device not there (yet) is waited for, as one lost while it runs and as
        # a serial port missing at the start: refused until 2026-12-07, so a USB camera
        # enumerated late after a reboot kept `studio camera run` from starting.
        if is_device_path(base_dir / source):
            return str(path)
        raise ConfigError(
            f"{key}: no such file, folder or device: {path}{_relative_note(source)}"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"{key}: cannot reach {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"{key}: not a usable path: {exc}") from exc
    return str(path)


def absent_camera_device(key: str, source: str, base_dir: Path) -> str | None:
    """A warning when the camera whose options are at ``key`` names a device path that is
    not there now (:func:`is_device_path`); ``None`` otherwise (a recording not there is
    :func:`camera_source`'s mistake)."""
    if not is_path_source(source):
        return None
    configured = base_dir / source
    if os.path.exists(configured) or not is_device_path(configured):
        return None
    return (
        f"warning: {key}.source: no such device on this machine: "
        f"{resolved_path(configured)}{_relative_note(source)}; studio camera run waits for it "
        "(offline, retried with backoff): plug it in, or check the spelling "
        "(ls /dev/v4l/by-id/ lists the cameras plugged in)"
    )


def _deck_profile(data: dict[str, Any]) -> object:
    """The deck profile's header read as ``studio camera run`` reads it (its format,
    version and template sizes; imported here: only a config with a camera needs OpenCV):
    a table calibration given as the deck is refused in the camera's words. Its templates
    (a megabyte) are the camera's to judge when it loads them."""
    from calibration.deck_profile import profile_header_problem

    problem = profile_header_problem(data, table_option="options.table")
    if problem is not None:
        raise ConfigError(problem)
    return data


def _table_calibration(data: dict[str, Any]) -> object:
    """The table calibration as ``studio camera run`` loads it (imported here: only a
    config with a camera needs OpenCV). A JSON object that is none at all (``{}``, a deck
    profile) is told what one holds and which command writes it."""
    from calibration.table import TABLE_FORMAT, TableCalibration

    if data.get("format") != TABLE_FORMAT and "zones" not in data:  # a layout: its own hint
        got = "an empty object" if not data else f"format {data.get('format')!r}"
        raise ConfigError(
            f"not a table calibration ({got}): a table calibration is the JSON file "
            f'`studio calibrate table --image FRAME --layout layout.json --out FILE` writes ("format": '
            f'"{TABLE_FORMAT}", the camera\'s homography onto the layout and the layout '
            "itself); see docs/camera.md"
        )
    return TableCalibration.from_dict(data)


def camera_file_mistakes(key: str, options: CameraOptions, base_dir: Path) -> list[str]:
    """Every mistake in the files of the camera whose options are at ``key``: its deck
    profile (there, readable, a JSON object, a deck profile of this version: a table
    calibration given as the deck was let through until 2026-12-07, and the camera then
    refused to start), its table calibration (read as ``studio camera run`` reads it: a
    singular homography or a layout that is no object is refused by both) and a path
    source (there, unless it names a device: waited for). The deck profile's templates
    are the camera's to judge when it loads it."""
    mistakes = []
    parsers: tuple[tuple[str, Path | None, Callable[[dict[str, Any]], object]], ...] = (
        ("deck", options.deck, _deck_profile),
        ("table", options.table, _table_calibration),
    )
    for name, configured, parse in parsers:
        if configured is not None:
            try:
                load_camera_file(f"{key}.{name}", configured, base_dir, parse)
            except ConfigError as exc:
                mistakes.append(str(exc))
    if options.source:
        try:
            camera_source(f"{key}.source", options.source, base_dir)
        except ConfigError as exc:
            mistakes.append(str(exc))
    return mistakes
