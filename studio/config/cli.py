"""``studio config check FILE``: validate a configuration and explain every mistake."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import make_url

from studio.config.camera_files import (
    absent_camera_device,
    camera_file_mistakes,
    is_path_source,
    is_virtual_source,
    resolved_path,
    unfed_virtual_camera,
)
from studio.config.loader import (
    ENV_PREFIX,
    config_data,
    explain_errors,
    mistake_line,
    read_toml,
)
from studio.config.models import (
    BrokerSettings,
    DatabaseSettings,
    DeviceSettings,
    StudioConfig,
    TableSettings,
    WebSettings,
    _is_loopback,
    single_source_tables,
    tables_without_camera,
    web_port_beside_brokers,
    web_port_clash,
)
from studio.errors import ConfigError, StoreError
from studio.store.database import (
    IN_MEMORY,
    kept_nowhere,
    safe_url,
    sqlite_file,
    url_holds_secret,
)
from studio.text import UTF8_BOM, NotUtf8Error, utf8_text

# A variable's name in an EnvironmentFile.
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

config_app = typer.Typer(help="Configuration files.", no_args_is_help=True)

# Secrets belong in the environment (an EnvironmentFile readable by the service alone),
# never in a file that is copied, diffed and committed: (place in the file, variable).
_SECRETS = (
    (("broker", "password"), "STUDIO_BROKER__PASSWORD"),
    (("web", "platform_token"), "STUDIO_WEB__PLATFORM_TOKEN"),
    (("database", "checkpoint_key"), "STUDIO_DATABASE__CHECKPOINT_KEY"),
)


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def secrets_in_file(data: dict[str, Any]) -> list[str]:
    """A warning for each secret written in the file itself (their values never shown)."""
    warnings = [
        f"warning: {'.'.join(path)} is in the file: set it through {variable} instead"
        for path, variable in _SECRETS
        if _lookup(data, path) is not None
    ]
    url = _lookup(data, ("database", "url"))
    # A password in the user part or a query parameter (?password=..., ?sslpassword=...).
    if isinstance(url, str) and url_holds_secret(url):
        warnings.append(
            "warning: database.url holds a password in the file: "
            "set the whole URL through STUDIO_DATABASE__URL instead"
        )
    return warnings


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Placed:
    """A device that is valid on its own, at its place in the file."""

    where: str  # tables[0].devices[1]
    table_id: str
    single_source: bool
    device: DeviceSettings

    @property
    def options(self) -> str:
        return f"{self.where}.options"


@dataclass(frozen=True)
class Parts:
    """The parts of a configuration the checks beyond the model's look at (its database
    and its devices): all of a valid configuration; of one the model refuses, those valid
    on their own (a bad table's good camera still has its files checked), ``None`` for a
    database section that is not."""

    database: DatabaseSettings | None
    devices: list[Placed]


def placed_devices(config: StudioConfig) -> list[Placed]:
    return [
        Placed(f"tables[{t}].devices[{d}]", table.id, table.single_source, device)
        for t, table in enumerate(config.tables)
        for d, device in enumerate(table.devices)
    ]


def parts_of(config: StudioConfig) -> Parts:
    return Parts(config.database, placed_devices(config))


def _valid(model: type[M], data: Any) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def salvaged_parts(data: dict[str, Any]) -> Parts:
    """The parts of ``data`` (a configuration the model refused) that validate alone."""
    raw_database = data.get("database", {})
    database = _valid(DatabaseSettings, raw_database) if isinstance(raw_database, dict) else None
    raw_tables = data.get("tables", [])
    devices: list[Placed] = []
    for t, raw in enumerate(raw_tables if isinstance(raw_tables, list) else []):
        if not isinstance(raw, dict):
            continue
        table = _valid(TableSettings, raw)
        if table is not None:
            devices.extend(
                Placed(f"tables[{t}].devices[{d}]", table.id, table.single_source, device)
                for d, device in enumerate(table.devices)
            )
            continue
        raw_id = raw.get("id")
        table_id = raw_id if isinstance(raw_id, str) else f"tables[{t}]"
        raw_devices = raw.get("devices", [])
        for d, raw_device in enumerate(raw_devices if isinstance(raw_devices, list) else []):
            device = _valid(DeviceSettings, raw_device)
            if device is not None:
                placed = Placed(
                    f"tables[{t}].devices[{d}]", table_id, raw.get("single_source") is True, device
                )
                devices.append(placed)
    return Parts(database, devices)


def _section(data: dict[str, Any], key: str, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """``keys`` of the section ``key`` of ``data``, or ``None`` if it is no section."""
    raw = data.get(key, {})
    return {k: v for k, v in raw.items() if k in keys} if isinstance(raw, dict) else None


def salvaged_web_port_clash(data: dict[str, Any]) -> str | None:
    """``web_port_clash`` of ``data`` (a configuration the model refused), from the broker's
    URL and the web address, if those validate alone: the model checks it only with the
    whole broker and web sections valid, and a broker's misspelt key (``keepalve``) hid it
    until fixed."""
    raw_broker = _section(data, "broker", ("url",))
    raw_web = _section(data, "web", ("host", "port"))
    if raw_broker is None or raw_web is None:
        return None
    broker, web = _valid(BrokerSettings, raw_broker), _valid(WebSettings, raw_web)
    return web_port_clash(broker, web) if broker is not None and web is not None else None


def missing_ports(devices: list[Placed]) -> list[str]:
    """A mistake for each shoe, shuffler or cut-card sensor without a port.

    The model allows it (the controller, and tests of it, need no port), but every
    process reads the same file and `studio drivers run` refuses such a device.
    """
    return [
        f"{placed.where}: a {placed.device.kind} needs a port "
        "(/dev/ttyUSB0 or socket://host:port); studio drivers run refuses it without"
        for placed in devices
        if placed.device.kind != "camera" and not placed.device.port
    ]


def _cameras(devices: list[Placed]) -> list[Placed]:
    return [placed for placed in devices if placed.device.kind == "camera"]


def incomplete_cameras(devices: list[Placed]) -> list[str]:
    """A mistake for each camera that `studio camera run` refuses whatever its files: no
    ``source``, no ``table`` calibration, or nothing to identify cards with (no ``deck``
    profile and ``barcodes = "off"``). Like a missing port, the model allows it."""
    mistakes = []
    for placed in _cameras(devices):
        where, options = placed.options, placed.device.camera
        if options.source is None:
            mistakes.append(f"{where}.source: a camera needs one (0, a file, a URL)")
        if options.table is None:
            mistakes.append(f"{where}.table: a camera needs its table calibration")
        if options.deck is None and options.barcodes == "off":
            mistakes.append(f"{where}: nothing to identify cards with: give deck or barcodes")
    return mistakes


def unstable_ports(devices: list[Placed]) -> list[str]:
    """A warning for each serial device that only its port tells apart: no ``wire_id`` and a
    port a reboot may renumber (``/dev/ttyUSB0``), so table A's driver could open table B's
    device. The driver learns the id on first contact (docs/devices.md 4.2), which helps
    only if the devices' ids differ."""
    return [
        f"warning: {p.where} ({p.table_id}/{p.device.id}): no options.wire_id and "
        f"port {p.device.port} may be renumbered after a reboot; use /dev/serial/by-id/... "
        "or set wire_id"
        for p in devices
        if p.device.kind != "camera"
        and p.device.port.startswith("/dev/")
        and not p.device.port.startswith(("/dev/serial/by-id/", "/dev/serial/by-path/"))
        and not p.device.options.get("wire_id")
    ]


_WINDOWS_PORT = re.compile(r"^COM[0-9]+$", re.IGNORECASE)


def absent_serial_ports(devices: list[Placed]) -> list[str]:
    """A warning for each serial port path that is no character device on this machine.

    A warning, not a mistake (a camera's missing recording is one): a USB adapter is there
    only while plugged, and `studio drivers run` keeps retrying a port it cannot open
    (``link down``) until it can. A relative path is from the working directory, as the
    drivers open it."""
    warnings = []
    for p in devices:
        port = p.device.port
        if p.device.kind == "camera" or not port or port.startswith("socket://"):
            continue
        where = f"warning: {p.where}.port ({p.table_id}/{p.device.id})"
        if _WINDOWS_PORT.match(port):
            warnings.append(
                f"{where}: {port} is a Windows port name: here a serial port is a device "
                "path, /dev/ttyUSB0 or, stable across reboots, /dev/serial/by-id/..."
            )
            continue
        try:
            mode = os.stat(port).st_mode
        except FileNotFoundError:
            relative = (
                "" if port.startswith("/") else " (a relative path is from the working directory)"
            )
            warnings.append(
                f"{where}: no such device on this machine: {port}{relative}; studio drivers "
                "run keeps retrying until it appears: plug it in, or check the spelling "
                "(ls /dev/serial/by-id/ lists the serial devices plugged in)"
            )
            continue
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            warnings.append(f"{where}: cannot reach {port}: {reason or exc}")
            continue
        if not stat.S_ISCHR(mode):
            warnings.append(
                f"{where}: {port} is not a serial device (not a character device): "
                "studio drivers run cannot open it as one"
            )
    return warnings


def missing_files(devices: list[Placed], base_dir: Path) -> list[str]:
    """A mistake for each file a camera device names that cannot be read: its deck profile
    and its table calibration (or either is not a JSON object), a video file or folder as
    its source (a device not there is a warning: :func:`absent_camera_devices`).

    Relative paths are from ``base_dir`` (the config file's folder), as `studio camera run`
    reads them; it refuses such a camera in the same words (``studio.config.camera_files``).
    """
    return [
        mistake
        for placed in _cameras(devices)
        for mistake in camera_file_mistakes(placed.options, placed.device.camera, base_dir)
    ]


def absent_camera_devices(devices: list[Placed], base_dir: Path) -> list[str]:
    """A warning for each camera whose source is a device path not there now
    (``camera_files.absent_camera_device``): a warning, as a serial port's, since `studio
    camera run` waits for it (until 2026-12-07 a mistake, and the camera refused to start);
    a recording not there is still a mistake (:func:`missing_files`)."""
    return [
        warning
        for p in _cameras(devices)
        if p.device.camera.source
        and (warning := absent_camera_device(p.options, p.device.camera.source, base_dir))
    ]


def unfed_virtual_cameras(devices: list[Placed]) -> list[str]:
    """``camera_files.unfed_virtual_cameras`` of the devices that validated."""
    return [
        unfed_virtual_camera(p.options, p.table_id, p.device.camera.source or "")
        for p in _cameras(devices)
        if not p.single_source and is_virtual_source(p.device.camera.source or "")
    ]


def no_tables(config: StudioConfig) -> list[str]:
    """A warning when there is no table: valid (the console and the audit commands need
    none), but the controller refuses to start."""
    if config.tables:
        return []
    return [
        "warning: no tables ([[tables]] in the file, or STUDIO_TABLES): "
        "studio controller run refuses to start without one"
    ]


# systemd's EnvironmentFile reading (src/basic/env-file.c), state by state.
_WHITESPACE = " \t\n\r"
_NEWLINE = "\n\r"
_SHELL_ESCAPED = '"\\`$'


def _parse_env_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """The variables of a systemd ``EnvironmentFile`` as systemd reads them, and warnings.

    As systemd: lines starting with ``#`` or ``;`` are comments (a ``#`` elsewhere is part
    of the value); an unquoted value loses its surrounding whitespace, a backslash keeps
    the character after it and a backslash at the end of a line joins the next; in
    ``'...'`` every character is kept; in ``"..."`` a backslash before ``"``, ``\\``,
    `` ` `` or ``$`` keeps that character, before a newline joins the lines, before any
    other is kept with it; quoted values may span lines, and text after a closing quote is
    joined to the value (``K="a" # b`` is ``a# b``, warned about), and so is a ``#``
    after a space in an unquoted value (``K=tok # the token`` is ``tok # the token``,
    warned about by line and key: until 2026-12-06 it passed quietly, a 48-character token
    the platform was then refused with).

    Refused, where systemd ignores the line without a word (the process would not have
    the variable): a line with no ``=``, a name that is not one (``export K=V``), a
    byte-order mark. A refusal names the line's number, never its text (it may hold a
    secret)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if data.startswith(UTF8_BOM):
        raise ConfigError(
            f"{path}: line 1 begins with a byte-order mark: systemd takes it as part of the "
            "first name and ignores that line; save the file without it"
        )
    try:
        text = utf8_text(data)
    except NotUtf8Error as exc:
        raise ConfigError(f"{path}: {exc}") from None
    variables: dict[str, str] = {}
    warnings: list[str] = []
    key: list[str] = []
    value: list[str] = []
    chop: int | None = None  # where an unquoted value's trailing whitespace starts
    quoted = False  # a quote closed in this value
    state = "pre_key"
    line = start = 1
    previous = ""  # the character before this one

    def refused(words: str) -> ConfigError:
        return ConfigError(f"{path}: line {start}: {words}")

    def comment_in_value() -> None:
        # Named by its line and its key, never its value: it is a secret.
        name = "".join(key).strip(_WHITESPACE)
        warning = (
            f"warning: {path}: line {start}: {name}: the ' #...' after the value is part of "
            "it, as systemd reads it (a # starts a comment only at the start of a line): "
            "put the comment on a line of its own"
        )
        if not warnings or warnings[-1] != warning:  # once for a value
            warnings.append(warning)

    def push() -> None:
        name = "".join(key).rstrip(_WHITESPACE)
        if not _ENV_NAME.match(name):
            if name.startswith("export") and _ENV_NAME.match(name[6:].lstrip()):
                raise refused("'export' is not taken (systemd ignores the line): write KEY=VALUE")
            raise refused("not a KEY=VALUE line")
        variables[name] = "".join(value[:chop] if state == "value" else value)

    for c in text:
        if state == "pre_key":
            if c in "#;":
                state = "comment"
            elif c not in _WHITESPACE:
                state, key, start = "key", [c], line
        elif state == "key":
            if c in _NEWLINE:
                raise refused("not a KEY=VALUE line")
            if c == "=":
                state, value, chop, quoted = "pre_value", [], None, False
            else:
                key.append(c)
        elif state == "pre_value":
            if c in _NEWLINE:
                push()
                state = "pre_key"
            elif c in "'\"":
                state = "single" if c == "'" else "double"
            elif c not in _WHITESPACE:
                if c == "#" and not quoted and previous in (" ", "\t"):
                    comment_in_value()  # K= # comment: the value is the comment
                if quoted:
                    warnings.append(
                        f"warning: {path}: line {start}: the text after the closing quote "
                        "is part of the value, as systemd reads it (a # starts a comment "
                        "only at the start of a line)"
                    )
                    quoted = False
                if c == "\\":
                    state = "value_escape"
                else:
                    state = "value"
                    value.append(c)
        elif state == "value":
            if c in _NEWLINE:
                push()
                state = "pre_key"
            elif c == "\\":
                state, chop = "value_escape", None
            else:
                if c == "#" and chop is not None:
                    comment_in_value()
                if c not in _WHITESPACE:
                    chop = None
                elif chop is None:
                    chop = len(value)
                value.append(c)
        elif state == "value_escape":
            state = "value"
            if c not in _NEWLINE:
                value.append(c)
        elif state == "single":
            if c == "'":
                state, quoted = "pre_value", True
            else:
                value.append(c)
        elif state == "double":
            if c == '"':
                state, quoted = "pre_value", True
            elif c == "\\":
                state = "double_escape"
            else:
                value.append(c)
        elif state == "double_escape":
            state = "double"
            if c in _SHELL_ESCAPED:
                value.append(c)
            elif c != "\n":
                value.extend(("\\", c))
        elif state == "comment":
            if c == "\\":
                state = "comment_escape"
            elif c in _NEWLINE:
                state = "pre_key"
        elif state == "comment_escape":
            state = "pre_key" if c in _NEWLINE else "comment"
        if c == "\n":
            line += 1
        previous = c
    if state == "key":
        raise refused("not a KEY=VALUE line")
    if state in ("single", "double", "double_escape"):
        warnings.append(
            f"warning: {path}: line {start}: a quote is not closed: systemd takes the value "
            "to the end of the file"
        )
    if state not in ("pre_key", "comment", "comment_escape"):
        push()
    return variables, warnings


def read_env_file(path: Path) -> dict[str, str]:
    """The variables of a systemd ``EnvironmentFile`` (``_parse_env_file``). Raises
    :class:`ConfigError` for a line systemd would ignore, naming its number."""
    return _parse_env_file(path)[0]


def env_file_warnings(path: Path) -> list[str]:
    """A warning when the file of secrets may be read by others than its owner, and for
    each line systemd reads otherwise than it looks (``_parse_env_file``)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return []
    warnings = _parse_env_file(path)[1]
    if mode & 0o077:
        warnings.append(f"warning: {path} is mode {mode:04o}: it holds secrets; chmod 600 it")
    return warnings


_PEM_BEGIN = b"-----BEGIN "


def insecure_settings(config: StudioConfig) -> list[str]:
    """A warning for each secret left unset and each way the settings expose one."""
    warnings = []
    web, broker = config.web, config.broker
    if web.platform_token is None:
        warnings.append(
            "warning: no web.platform_token (STUDIO_WEB__PLATFORM_TOKEN): the platform "
            "REST API is disabled (every request answered 503)"
        )
    if config.database.checkpoint_key is None:
        warnings.append(
            "warning: no database.checkpoint_key (STUDIO_DATABASE__CHECKPOINT_KEY): "
            "checkpoints are not signed, so whoever can write the database can have a "
            "start take a table's state of their own (docs/security.md)"
        )
    if broker.password is not None and broker.url is not None and not broker.uses_tls:
        warnings.append(
            f"warning: broker.password is sent in clear over {broker.url}: use mqtts:// "
            "or [broker.tls]"
        )
    if broker.password is not None and broker.username is None:
        warnings.append(
            "warning: broker.password (STUDIO_BROKER__PASSWORD) is set but no "
            "broker.username: MQTT sends a password only with a user name, so it is never "
            "sent; give broker.username, the user it is the password of"
        )
    if broker.tls is not None and broker.tls.insecure:
        warnings.append(
            "warning: broker.tls.insecure = true: the broker's host name is not verified, "
            "so anyone on the path can pose as it (lab use only)"
        )
    if not web.secure_cookies and not (web.host == "localhost" or web.host.startswith("127.")):
        warnings.append(
            f"warning: web.host {web.host} is reachable from other machines and "
            "web.secure_cookies is false: serve the console over HTTPS and set "
            "secure_cookies = true, or the session cookie may travel in clear"
        )
    if broker.tls is not None:
        for key in ("ca_certs", "certfile", "keyfile"):
            path = getattr(broker.tls, key)
            if path is None:
                continue
            try:
                head = path.read_bytes()[:4096]
            except OSError as exc:
                warnings.append(f"warning: broker.tls.{key}: cannot read {path}: {exc.strerror}")
                continue
            if not head.strip():
                warnings.append(f"warning: broker.tls.{key}: {path} is empty")
            elif _PEM_BEGIN not in head:
                warnings.append(f"warning: broker.tls.{key}: {path} holds no PEM block")
    return warnings


_VERIFIED_SSL = ("verify-full", "verify-ca")


def _postgres_hosts(url: str) -> list[str]:
    """The hosts a PostgreSQL URL connects to, a socket folder left out (empty: this
    machine's socket)."""
    parsed = make_url(url)
    named = [parsed.host] if parsed.host else []
    query = parsed.query.get("host", ())
    for value in (query,) if isinstance(query, str) else query:
        named.extend(value.split(","))
    hosts = []
    for host in named:
        host = host.strip()
        if host.startswith("[") and "]" in host:  # [::1]:5432
            host = host[1 : host.index("]")]
        elif host.count(":") == 1:
            host = host.partition(":")[0]
        if host and not host.startswith("/"):
            hosts.append(host)
    return hosts


def unsafe_transport(config: StudioConfig) -> list[str]:
    """A warning for each connection to another machine that anyone on the network can
    read or pose as the other end of: the broker without TLS or without credentials,
    PostgreSQL without verified TLS. Warnings, not mistakes: a studio may run on an
    isolated network (``--strict`` makes them fail the check)."""
    warnings = []
    broker, url = config.broker, config.database.url
    if broker.url is not None and not _is_loopback(broker.host):
        if not broker.uses_tls:
            warnings.append(
                f"warning: broker.url {broker.url} is another machine and has no TLS: "
                "cards, bets and commands cross the network in clear, and anyone on it can "
                "pose as the broker; use mqtts:// with broker.tls.ca_certs (or keep the "
                "network isolated)"
            )
        if broker.username is None and (broker.tls is None or broker.tls.certfile is None):
            warnings.append(
                f"warning: broker.url {broker.url}: no broker.username nor client certificate "
                "(broker.tls.certfile): a broker that admits anonymous clients lets anyone "
                "who reaches it publish cards and commands; give each service its user "
                "(password in STUDIO_BROKER__PASSWORD) or certificate"
            )
    if url.startswith(("postgresql://", "postgres://")):
        remote = [host for host in _postgres_hosts(url) if not _is_loopback(host)]
        query = make_url(url).query
        key = "ssl" if "ssl" in query else "sslmode"  # asyncpg's spelling, or libpq's
        mode = query.get(key)
        if remote and mode not in _VERIFIED_SSL:
            given = f"{key}={mode}" if isinstance(mode, str) else "no sslmode"
            what = (
                "encrypts but verifies no server, so a machine on the path can pose as it"
                if mode == "require"
                else "the event log and the console's password hashes may cross the network "
                "in clear, and a machine on the path can pose as the server"
            )
            warnings.append(
                f"warning: database.url {safe_url(url)}: {remote[0]} is another machine and "
                f"the connection is not verified TLS ({given}): {what}; add "
                "?sslmode=verify-full&sslrootcert=/etc/studio/pg-ca.pem (docs/security.md)"
            )
    return warnings


# The files a PostgreSQL URL may name, as libpq (and asyncpg) reads them: ``system`` is
# libpq's word for the system's CAs, no file.
_POSTGRES_FILES = ("sslrootcert", "sslcert", "sslkey")


def _postgres_files(url: str) -> list[tuple[str, Path]]:
    """The TLS files ``url`` (a PostgreSQL URL) names, by option."""
    if not url.startswith(("postgresql://", "postgres://")):
        return []
    try:
        query = make_url(url).query
    except Exception:  # refused by the model, in its words
        return []
    named = []
    for key in _POSTGRES_FILES:
        value = query.get(key)
        if isinstance(value, str) and value and not (key == "sslrootcert" and value == "system"):
            named.append((key, Path(value)))
    return named


def missing_database_files(database: DatabaseSettings | None) -> list[str]:
    """A mistake for each TLS file a PostgreSQL ``database.url`` names
    (``?sslrootcert=/etc/studio/pg-ca.pem``, ``sslcert``, ``sslkey``) that is no file this
    process can read: every process would fail to connect (``FileNotFoundError``), naming
    neither the option nor the URL. The broker's TLS files were checked; until 2026-12-06
    these were not (an operations review). A relative path is from the working directory,
    as the driver opens it."""
    if database is None:
        return []
    mistakes = []
    for key, path in _postgres_files(database.url):
        where = f"database.url: {key}"
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            relative = (
                "" if path.is_absolute() else " (a relative path is from the working directory)"
            )
            mistakes.append(f"{where}: no such file: {path}{relative}")
            continue
        except OSError as exc:
            mistakes.append(f"{where}: cannot reach {path}: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "a special file"
            mistakes.append(f"{where}: {path} is {what}, not a file")
            continue
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            mistakes.append(f"{where}: cannot read {path}: {exc.strerror or exc}")
    return mistakes


def resolved_paths(config: StudioConfig, base_dir: Path) -> list[str]:
    """A note for each relative path the check looked at: the path it stands for, resolved
    (no ``..``), and what it is relative to (they differ: the working directory or the file's folder)."""
    notes = []
    cwd = "relative to the working directory"
    for key in ("ca_certs", "certfile", "keyfile"):
        path = getattr(config.broker.tls, key) if config.broker.tls is not None else None
        if path is not None and not path.is_absolute():
            notes.append(f"note: broker.tls.{key}: {path} is {resolved_path(path)} ({cwd})")
    try:
        database = sqlite_file(config.database.url)
    except StoreError:
        database = None
    if database is not None and not database.is_absolute():
        notes.append(f"note: database.url: {database} is {resolved_path(database)} ({cwd})")
    for key, path in _postgres_files(config.database.url):
        if not path.is_absolute():
            notes.append(f"note: database.url: {key} {path} is {resolved_path(path)} ({cwd})")
    for placed in _cameras(placed_devices(config)):
        where, options = placed.options, placed.device.camera
        named = [("deck", options.deck), ("table", options.table)]
        if options.source is not None and is_path_source(options.source):
            named.append(("source", Path(options.source)))
        for key, path in named:
            if path is not None and not path.is_absolute():
                notes.append(
                    f"note: {where}.{key}: {path} is {resolved_path(base_dir / path)} "
                    "(relative to the configuration file's folder)"
                )
    return notes


def ignored_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each variable named like a setting in another case than ``STUDIO_``
    (``studio_web__port``): no process reads it (the prefix is matched as written, the rest
    of the name in any case, ``STUDIO_WEB__port``), and until 2026-12-06 nothing said so.
    Its name only: its value may be a secret."""
    return [
        f"warning: the variable {name} is not read: a setting's variable begins with "
        f"STUDIO_ in capitals ({ENV_PREFIX}{name[len(ENV_PREFIX) :].upper()})"
        for name in sorted(environ)
        if name.upper().startswith(ENV_PREFIX) and not name.startswith(ENV_PREFIX)
    ]


def _count(number: int, what: str) -> str:
    return f"{number} {what}{'' if number == 1 else 's'}"


@config_app.command("check")
def check(
    file: Path = typer.Argument(..., help="TOML configuration file"),
    env_file: Path | None = typer.Option(
        None,
        "--env-file",
        help="load KEY=VALUE lines (the unit's EnvironmentFile) over the environment first",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="exit 2 on a warning too (insecure transport, secrets unset)"
    ),
) -> None:
    """Validate FILE (plus STUDIO_* variables); print every mistake with its location.

    Exits 2 on a mistake (with --strict, on a warning too); warns about secrets in the
    file, secrets unset and insecure settings; connects to nothing. One run reports every
    mistake it can find: the checks beyond the model's (ports, cameras and their files)
    run on each section and device that is valid on its own.
    """
    try:
        environ = dict(os.environ)
        env_warnings: list[str] = []
        if env_file is not None:
            environ.update(read_env_file(env_file))
            env_warnings = env_file_warnings(env_file)
        data, env_sources = config_data(file, environ)
        warnings = [
            *env_warnings,
            *ignored_variables(environ),
            *secrets_in_file(read_toml(file)),
        ]
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    mistakes: list[str] = []
    try:
        config: StudioConfig | None = StudioConfig.model_validate(data)
    except ValidationError as exc:
        config = None
        mistakes.extend(explain_errors(exc, str(file), env_sources))
        clash = salvaged_web_port_clash(data)
        if clash is not None and not any(clash in mistake for mistake in mistakes):
            mistakes.append(mistake_line(("web",), clash, str(file), env_sources))
    parts = parts_of(config) if config is not None else salvaged_parts(data)
    database = parts.database
    own = [
        *([IN_MEMORY] if database is not None and kept_nowhere(database.url) else []),
        *missing_ports(parts.devices),
        *incomplete_cameras(parts.devices),
        *missing_files(parts.devices, file.parent),
        *missing_database_files(database),
    ]
    mistakes.extend(f"{file}: {mistake}" for mistake in own)
    if mistakes:
        # Each mistake one line (a secret is never in one); how many, when more than one.
        # The warnings wait for a valid configuration: some weigh settings together.
        total = f"{file}: {_count(len(mistakes), 'mistake')} found"
        tail = (
            [f"{total}; the warnings are listed once they are fixed"] if len(mistakes) > 1 else []
        )
        typer.echo("\n".join([*mistakes, *tail]), err=True)
        raise typer.Exit(2)
    assert config is not None  # a configuration the model refused has a mistake
    warnings += [
        *no_tables(config),
        *tables_without_camera(config),
        *unstable_ports(parts.devices),
        *absent_serial_ports(parts.devices),
        *absent_camera_devices(parts.devices, file.parent),
        *unfed_virtual_cameras(parts.devices),
        *insecure_settings(config),
        *unsafe_transport(config),
        *filter(None, [web_port_beside_brokers(config)]),
    ]
    for warning in warnings:
        typer.echo(warning, err=True)
    for note in [*single_source_tables(config), *resolved_paths(config, file.parent)]:
        typer.echo(note)
    if strict and warnings:
        typer.echo(
            f"{file}: {_count(len(warnings), 'warning')} found, refused by --strict", err=True
        )
        raise typer.Exit(2)
    broker = config.broker.url or (
        "embedded (demo and tests only: controller/drivers/camera run need broker.url)"
    )
    devices = sum(len(t.devices) for t in config.tables)
    with_warnings = f" with {_count(len(warnings), 'warning')}" if warnings else ""
    typer.echo(
        f"{file}: OK{with_warnings} — {len(config.tables)} table(s), {devices} device(s), "
        f"broker {broker}, database {safe_url(config.database.url)}"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
