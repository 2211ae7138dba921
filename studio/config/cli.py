"""``studio config check FILE``: validate a configuration and explain every mistake."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import typer

from studio.config.camera_files import (
    camera_file_mistakes,
    cameras,
    is_path_source,
    unfed_virtual_cameras,
)
from studio.config.loader import load_config, read_toml
from studio.config.models import StudioConfig, web_port_beside_brokers
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


def missing_ports(config: StudioConfig) -> list[str]:
    """A mistake for each shoe, shuffler or cut-card sensor without a port.

    The model allows it (the controller, and tests of it, need no port), but every
    process reads the same file and `studio drivers run` refuses such a device.
    """
    return [
        f"tables[{t}].devices[{d}]: a {device.kind} needs a port "
        "(/dev/ttyUSB0 or socket://host:port); studio drivers run refuses it without"
        for t, table in enumerate(config.tables)
        for d, device in enumerate(table.devices)
        if device.kind != "camera" and not device.port
    ]


def incomplete_cameras(config: StudioConfig) -> list[str]:
    """A mistake for each camera that `studio camera run` refuses whatever its files: no
    ``source``, no ``table`` calibration, or nothing to identify cards with (no ``deck``
    profile and ``barcodes = "off"``). Like a missing port, the model allows it."""
    mistakes = []
    for where, _, device in cameras(config):
        options = device.camera
        if options.source is None:
            mistakes.append(f"{where}.source: a camera needs one (0, a file, a URL)")
        if options.table is None:
            mistakes.append(f"{where}.table: a camera needs its table calibration")
        if options.deck is None and options.barcodes == "off":
            mistakes.append(f"{where}: nothing to identify cards with: give deck or barcodes")
    return mistakes


def unstable_ports(config: StudioConfig) -> list[str]:
    """A warning for each serial device that only its port tells apart: no ``wire_id`` and a
    port a reboot may renumber (``/dev/ttyUSB0``), so table A's driver could open table B's
    device. The driver learns the id on first contact (docs/devices.md 4.2), which helps
    only if the devices' ids differ."""
    return [
        f"warning: tables[{t}].devices[{d}] ({table.id}/{device.id}): no options.wire_id and "
        f"port {device.port} may be renumbered after a reboot; use /dev/serial/by-id/... "
        "or set wire_id"
        for t, table in enumerate(config.tables)
        for d, device in enumerate(table.devices)
        if device.kind != "camera"
        and device.port.startswith("/dev/")
        and not device.port.startswith(("/dev/serial/by-id/", "/dev/serial/by-path/"))
        and not device.options.get("wire_id")
    ]


def missing_files(config: StudioConfig, base_dir: Path) -> list[str]:
    """A mistake for each file a camera device names that cannot be read: its deck profile
    and its table calibration (or either is not a JSON object), a video file, folder or
    device as its source.

    Relative paths are from ``base_dir`` (the config file's folder), as `studio camera run`
    reads them; it refuses such a camera in the same words (``studio.config.camera_files``).
    """
    return [
        mistake
        for where, _, device in cameras(config)
        for mistake in camera_file_mistakes(where, device.camera, base_dir)
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
    joined to the value (``K="a" # b`` is ``a# b``, warned about).

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

    def refused(words: str) -> ConfigError:
        return ConfigError(f"{path}: line {start}: {words}")

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


def resolved_paths(config: StudioConfig, base_dir: Path) -> list[str]:
    """A note for each relative path the check looked at: the absolute path it stands for,
    and what it is relative to (they differ: the working directory or the file's folder)."""
    notes = []
    cwd = "relative to the working directory"
    for key in ("ca_certs", "certfile", "keyfile"):
        path = getattr(config.broker.tls, key) if config.broker.tls is not None else None
        if path is not None and not path.is_absolute():
            notes.append(f"note: broker.tls.{key}: {path} is {path.absolute()} ({cwd})")
    try:
        database = sqlite_file(config.database.url)
    except StoreError:
        database = None
    if database is not None and not database.is_absolute():
        notes.append(f"note: database.url: {database} is {database.absolute()} ({cwd})")
    for where, _, device in cameras(config):
        options = device.camera
        named = [("deck", options.deck), ("table", options.table)]
        if options.source is not None and is_path_source(options.source):
            named.append(("source", Path(options.source)))
        for key, path in named:
            if path is not None and not path.is_absolute():
                notes.append(
                    f"note: {where}.{key}: {path} is {(base_dir / path).absolute()} "
                    "(relative to the configuration file's folder)"
                )
    return notes


@config_app.command("check")
def check(
    file: Path = typer.Argument(..., help="TOML configuration file"),
    env_file: Path | None = typer.Option(
        None,
        "--env-file",
        help="load KEY=VALUE lines (the unit's EnvironmentFile) over the environment first",
    ),
) -> None:
    """Validate FILE (plus STUDIO_* variables); print each mistake with its location.

    Exits 2 on a mistake; warns about secrets in the file, secrets unset and insecure
    settings; connects to nothing.
    """
    try:
        environ = dict(os.environ)
        env_warnings: list[str] = []
        if env_file is not None:
            environ.update(read_env_file(env_file))
            env_warnings = env_file_warnings(env_file)
        config = load_config(file, environ=environ)
        warnings = [*env_warnings, *secrets_in_file(read_toml(file))]
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    mistakes = [
        *([IN_MEMORY] if kept_nowhere(config.database.url) else []),
        *missing_ports(config),
        *incomplete_cameras(config),
        *missing_files(config, file.parent),
    ]
    if mistakes:
        typer.echo("\n".join(f"{file}: {mistake}" for mistake in mistakes), err=True)
        raise typer.Exit(2)
    for warning in [
        *warnings,
        *no_tables(config),
        *unstable_ports(config),
        *unfed_virtual_cameras(config),
        *insecure_settings(config),
        *filter(None, [web_port_beside_brokers(config)]),
    ]:
        typer.echo(warning, err=True)
    for note in resolved_paths(config, file.parent):
        typer.echo(note)
    broker = config.broker.url or (
        "embedded (demo and tests only: controller/drivers/camera run need broker.url)"
    )
    devices = sum(len(t.devices) for t in config.tables)
    typer.echo(
        f"{file}: OK — {len(config.tables)} table(s), {devices} device(s), "
        f"broker {broker}, database {safe_url(config.database.url)}"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
