"""Configuration models. Every model forbids unknown keys so a typo is an error, not a default."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import SplitResult, urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from studio.contract.topics import SEGMENT_PATTERN
from studio.device_protocols import protocol_problem
from studio.errors import StoreError
from studio.rules.errors import RuleSetError
from studio.rules.ruleset import ruleset_from_spec
from studio.store.database import sqlite_file, url_problem

# A topic segment: no MQTT wildcards or separators, so ids are safe inside topics (the
# contract's rule, which payloads' device ids are held to as well).
TOPIC_SEGMENT = SEGMENT_PATTERN


class StrictModel(BaseModel):
    # NaN and infinity are no setting: refused as such ("Input should be a finite number")
    # rather than by a bound they slip past or fail with a misleading message.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# A host name: dot-separated labels of letters, digits, '-' (not at either end) and '_'.
_HOSTNAME = re.compile(
    r"^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
    r"(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$"
)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_host(host: str) -> bool:
    """An IP address or a host name (no port, scheme, path or space)."""
    return _ip(host) is not None or bool(_HOSTNAME.match(host))


# What names this machine for a server listening on it: a loopback address binds only on
# it, a wildcard on every address.
_WILDCARDS = ("0.0.0.0", "::", "")


def _shown_url(parts: SplitResult) -> str:
    """A URL as an error message may echo it: a password before the host masked, and a
    query or fragment (which may hold one, ``?password=...``). The path is shown: it is
    often the very mistake (``mqtt://h:1883/studio``); until 2026-12-06 it was masked."""
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}" if ":" in user else netloc
    masked = ("***" if part else "" for part in (parts.query, parts.fragment))
    return urlunsplit((parts.scheme, netloc, parts.path, *masked))


def _is_loopback(host: str) -> bool:
    address = _ip(host)
    return host.lower().rstrip(".") == "localhost" or (address is not None and address.is_loopback)


# The addresses ``localhost`` names (/etc/hosts, RFC 6761): a server bound to it listens on
# each, so it clashes with a broker on either.
_LOCALHOST = frozenset({"127.0.0.1", "::1"})


def _addresses(host: str) -> frozenset[str]:
    """What ``host`` stands for when two servers bind it: ``localhost`` its addresses, an
    address written any way itself, another name itself (any case)."""
    name = host.lower().rstrip(".")
    if name == "localhost":
        return _LOCALHOST
    address = _ip(host)
    return frozenset({str(address) if address is not None else name})


def web_port_clash(broker: BrokerSettings, web: WebSettings) -> str | None:
    """The mistake of a console (``web``) that could not listen, the broker being on its
    address and port: the broker's very host (``localhost`` is 127.0.0.1 and ::1 alike),
    or every address while the broker is on this machine. Two loopback addresses
    (127.0.0.1 and ::1, or 127.0.0.2) can each have a server on the port: a warning
    (``web_port_beside_brokers``). Names the settings, so that ``config check`` names the
    variables that set them."""
    if broker.url is None or web.port != broker.port:
        return None
    same = bool(_addresses(broker.host) & _addresses(web.host)) or (
        _is_loopback(broker.host) and web.host in _WILDCARDS
    )
    if not same:
        return None
    return (
        f"web.port {web.port} is the broker's port on the same machine (web.host "
        f"{web.host or repr(web.host)}, broker.url {broker.url}): the console could not "
        "listen; give web.port another"
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback only."""
    return _is_loopback(host)


# The log levels every process takes (``log_level``, ``studio demo --log-level``), in any
# case: until 2026-12-06 the configuration took upper case only and no CRITICAL
# (``STUDIO_LOG_LEVEL=debug`` was refused) while the demo took both.
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)


class TlsSettings(StrictModel):
    """TLS towards the broker. Per-device client certificates go in ``certfile``/``keyfile``."""

    ca_certs: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    insecure: bool = Field(False, description="skip hostname verification (lab use only)")

    @field_validator("ca_certs", "certfile", "keyfile")
    @classmethod
    def _existing_file(cls, path: Path | None) -> Path | None:
        # Missing, the client only retried for ever with "[Errno 2] No such file or
        # directory", naming neither the file nor the key.
        if path is not None and not path.is_file():
            raise ValueError(
                f"no such file: {path} (a relative path is from the working directory)"
            )
        return path


class BrokerSettings(StrictModel):
    """Where the MQTT broker is. ``url = None`` starts the embedded broker."""

    url: str | None = Field(None, description="mqtt://host:port or mqtts://host:port")
    username: str | None = None
    password: SecretStr | None = None
    client_id_prefix: str = Field("studio", pattern=TOPIC_SEGMENT)
    keepalive: int = Field(15, ge=5, le=600)
    tls: TlsSettings | None = None

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if "@" in parts.netloc:
            # Never echoed: the value holds a password. The client takes credentials from
            # username/password only, so these would be silently dropped anyway.
            raise ValueError(
                "broker url must not hold credentials: set broker.username in the file and "
                "the password in STUDIO_BROKER__PASSWORD"
            )
        shown = _shown_url(parts)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"broker url must start with mqtt:// or mqtts://, got {shown!r}")
        if not parts.hostname:
            raise ValueError(f"broker url has no host: {shown!r}")
        if not _is_host(parts.hostname):
            raise ValueError(f"broker url has a bad host {parts.hostname!r}: {shown!r}")
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"broker url has a bad port: {shown!r}") from exc
        if port == 0:
            raise ValueError(f"broker url has port 0, which no broker listens on: {shown!r}")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            # The client takes the host and port alone: a path was dropped without a word.
            raise ValueError(
                f"broker url is mqtt(s)://host:port, with no path or query: {shown!r} "
                "(topics are not configured here)"
            )
        return value

    @property
    def host(self) -> str:
        return urlsplit(self.url or "mqtt://127.0.0.1").hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.url or "mqtt://127.0.0.1")
        return parts.port or (8883 if parts.scheme == "mqtts" else 1883)

    @property
    def uses_tls(self) -> bool:
        return self.tls is not None or (self.url or "").startswith("mqtts://")


CHECKPOINT_KEY_MIN = 32


class DatabaseSettings(StrictModel):
    """The event log. SQLite by default; ``postgresql://...`` for PostgreSQL."""

    url: str = "sqlite:///var/studio.db"
    # Signs the controller's checkpoints (HMAC-SHA256), so that someone who can write the
    # database cannot have a start take a table's state of their own (docs/security.md); set
    # it through the environment (STUDIO_DATABASE__CHECKPOINT_KEY), never in a committed file.
    checkpoint_key: SecretStr | None = None

    @field_validator("checkpoint_key")
    @classmethod
    def _key_long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < CHECKPOINT_KEY_MIN:
            raise ValueError(
                f"must be at least {CHECKPOINT_KEY_MIN} characters (make one with: openssl "
                "rand -hex 32)"
            )
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        scheme = value.partition("://")[0]
        if scheme not in ("sqlite", "postgresql", "postgres"):
            # Without "://" the whole value is the "scheme": shown only when it cannot
            # hold a password (no "@" or ":"), as a bare "foo" or "mysql".
            got = f", got {scheme!r}" if "@" not in scheme and ":" not in scheme else ""
            raise ValueError(f"database url must be sqlite:///PATH or postgresql://...{got}")
        if scheme == "sqlite" and not value.startswith("sqlite:///"):
            # SQLAlchemy reads "sqlite://var/studio.db" as a host, "sqlite://" as a database
            # in memory; every process refused both ("unsupported database url").
            raise ValueError(
                "database url sqlite:// takes a third slash before a relative path "
                "(sqlite:///var/studio.db) and a fourth before an absolute one "
                "(sqlite:////var/lib/studio/studio.db)"
                + (f", got {value!r}" if "@" not in value else "")
            )
        # The words name no part of it: the rest of a password may be anywhere.
        problem = url_problem(value)
        if problem is not None:
            raise ValueError(f"database url {problem}")
        try:  # what every process opens it with
            sqlite_file(value)
        except StoreError as exc:
            raise ValueError(str(exc)) from exc
        return value


PLATFORM_TOKEN_MIN = 32


class WebSettings(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # The game platform authenticates with this bearer token; set it through the
    # environment (STUDIO_WEB__PLATFORM_TOKEN), never in a committed file.
    platform_token: SecretStr | None = None
    secure_cookies: bool = Field(False, description="mark cookies Secure (behind HTTPS)")
    # The most connections one client address may hold at once (studio.web.server's
    # MAX_CONNECTIONS_PER_ADDRESS); 0: no such cap, for a console behind a reverse proxy,
    # whose clients all have its address.
    max_connections_per_address: int = Field(
        200, description="connections one address may hold at once; 0: no cap per address"
    )

    @field_validator("max_connections_per_address", mode="before")
    @classmethod
    def _a_count_of_connections(cls, value: Any) -> Any:
        # Before, pydantic took true for 1 and gave its own words for a negative count.
        count = value
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            count = int(value)  # from the environment
        elif isinstance(value, float) and value.is_integer():
            count = int(value)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            shown = str(value).lower() if isinstance(value, bool) else repr(value)
            raise ValueError(
                "a number of connections one client address may hold at once, or 0 for no "
                f"cap per address (behind a reverse proxy); got {shown}"
            )
        return count

    @field_validator("host")
    @classmethod
    def _listening_host(cls, host: str) -> str:
        # Taken before, the console then failed to listen ("127.0.0.1:8000",
        # "htp://0.0.0.0"): the server binds an IPv4 address.
        address = _ip(host)
        if host and (isinstance(address, ipaddress.IPv6Address) or not _is_host(host)):
            raise ValueError(
                f"{host!r} is not an IPv4 address or a host name (the port goes in "
                "web.port; 0.0.0.0 listens on every address)"
            )
        return host

    @field_validator("platform_token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        # The token is the REST commands' and streams' only credential, and failed
        # attempts are not throttled (console logins are): length keeps guessing out of reach.
        if value is not None and len(value.get_secret_value()) < PLATFORM_TOKEN_MIN:
            raise ValueError(
                f"must be at least {PLATFORM_TOKEN_MIN} characters: failed token attempts "
                "are not throttled (make one with: openssl rand -hex 16)"
            )
        return value


# Upper bounds of the console's durations: far past any sensible policy, and well inside
# what a date can hold (a session's expiry and a lock's end are the time now plus these).
_YEAR_MINUTES = 366 * 24 * 60
_KEEP_DAYS_MAX = 100 * 366
# A count the database compares and limits queries by: past it, no limit at all.
_COUNT_MAX = 1_000_000
FOREVER = "forever"


class ConsoleSecurity(StrictModel):
    """``[console]``: sessions, lockout and the login attempts' retention of the console.

    Each duration's unit is in its name. The defaults are the console's own
    (``studio.console.auth.ConsoleSettings``); see docs/security.md.
    """

    session_lifetime_hours: float = Field(
        12.0, gt=0, le=_YEAR_MINUTES / 60, description="a session ends this long after login"
    )
    idle_timeout_minutes: float = Field(
        120.0, gt=0, le=_YEAR_MINUTES, description="a session ends after this long unused"
    )
    max_failures: int = Field(
        5, ge=1, le=_COUNT_MAX, description="wrong passwords in a row that lock an account"
    )
    lockout_minutes: float = Field(
        15.0,
        gt=0,
        le=_YEAR_MINUTES,
        description="how long a lock lasts; also the per-address window",
    )
    remote_max_failures: int = Field(
        50,
        ge=1,
        le=_COUNT_MAX,
        description="failures from one address within the lockout window that refuse it",
    )
    attempts_kept_days: float | None = Field(
        90.0, description='days login attempts are kept, or "forever"'
    )

    @field_validator("attempts_kept_days", mode="before")
    @classmethod
    def _days_or_forever(cls, value: Any) -> float | None:
        # TOML has no null: "forever" is how the file says "never delete them".
        if value == FOREVER:
            return None
        try:
            days = float(value) if isinstance(value, int | float | str) else None
        except (ValueError, OverflowError):  # an integer past a float: TOML's are unbounded
            days = None
        if days is None or not 0 < days <= _KEEP_DAYS_MAX:
            raise ValueError(
                f'a number of days (more than 0, at most {_KEEP_DAYS_MAX}), or "{FOREVER}" '
                f"to keep them; got {value!r}"
            )
        return days

    @model_validator(mode="after")
    def _kept_through_the_lockout(self) -> ConsoleSecurity:
        # The per-address throttle counts the failures within the lockout window: deleting
        # them sooner would let an address start afresh.
        kept = self.attempts_kept_days
        if kept is not None and kept * 24 * 60 < self.lockout_minutes:
            raise ValueError(
                f"attempts_kept_days ({kept:g} days) must cover lockout_minutes "
                f"({self.lockout_minutes:g}): the per-address throttle counts the failed "
                "logins within the lockout window"
            )
        return self


DeviceKind = Literal["shoe", "shuffler", "cutcard", "camera"]


class CameraOptions(StrictModel):
    """The ``options`` of a ``camera`` device: what ``studio camera run`` reads it with.

    Relative paths are relative to the configuration file's folder.
    """

    source: str | None = Field(
        None,
        description="device index (0), video file, rtsp:// or http:// URL, or a folder of images",
    )
    deck: Path | None = Field(None, description="deck profile JSON (studio calibrate deck)")
    table: Path | None = Field(None, description="table calibration JSON (studio calibrate table)")
    barcodes: Literal["auto", "zxing", "pyzbar", "off"] = Field(
        "auto", description="studio-deck barcodes: auto = zxing-cpp, else pyzbar, else none"
    )
    threshold: float | None = Field(
        None, gt=0, lt=1, description="confidence below which a card is unreadable"
    )
    settle_frames: int = Field(5, ge=1, description="frames a card must be still")
    remove_frames: int = Field(10, ge=1, description="frames a card must be gone")
    read_attempts: int = Field(5, ge=1, description="frames an unreadable card is retried on")
    max_fps: float | None = Field(None, gt=0, description="frames per second at most")
    frame_timeout: float = Field(
        5.0, gt=0, description="seconds without a frame before a live stream counts as stalled"
    )
    open_timeout: float = Field(
        10.0, gt=0, description="seconds a live source may take to open before it is retried"
    )


# SDL/1's device field (docs/devices.md, section 1): the id in every frame, the host's
# (``host_id``) as the device's (``wire_id``).
WIRE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
# The least clock skew a device may be allowed, in seconds (the driver's default is 2).
SKEW_TOLERANCE_MIN = 0.5


class SerialOptions(StrictModel):
    """The ``options`` of a ``shoe``, ``shuffler`` or ``cutcard`` device (docs/devices.md).

    ``None`` leaves the driver's own default; the driver reads the options as given.
    """

    protocol: str | None = Field(
        None, description="codec name (studio/device_protocols.py lists them by kind)"
    )
    wire_id: str | None = Field(None, description="the device id its frames must carry")
    host_id: str | None = Field(None, description="the host's id in its frames")
    handshake_timeout: float | None = Field(None, gt=0, description="seconds, HELLO answer")
    gap_timeout: float | None = Field(None, gt=0, description="seconds before a gap is asked for")
    skew_tolerance: float | None = Field(None, description="seconds of clock skew allowed")

    @field_validator("skew_tolerance")
    @classmethod
    def _skew_above_the_line_delay(cls, value: float | None) -> float | None:
        # 0 was taken: every heartbeat's few ms of delay then read as a skew and the next
        # as none (health ok/degraded by turns), and a card stamped a ms ahead of the host
        # went out with host time as "not a possible time".
        if value is not None and value < SKEW_TOLERANCE_MIN:
            raise ValueError(
                f"must be at least {SKEW_TOLERANCE_MIN} seconds, not {value:g}: the skew is "
                "the device's time minus the host's on a frame's arrival, so it holds the "
                "line's delay (a 256-byte frame takes 0.27 s at 9600 baud) and both clocks' "
                "error; a tolerance below them has health flap between ok and degraded and "
                "sound cards stamped with host time"
            )
        return value

    @field_validator("wire_id", "host_id")
    @classmethod
    def _sdl1_id(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Unchecked, a host id the device cannot parse ("a,b") had every HELLO go
        # unanswered, retried for ever, and a long one ("frame too long") the same; a wire
        # id no frame can carry refused every device on the port.
        if value is not None and not WIRE_ID.match(value):
            whose = (
                "the host's id in every frame it sends"
                if info.field_name == "host_id"
                else ("the device's id in every frame, which the driver compares")
            )
            raise ValueError(
                f"{value[:40]!r}{'...' if len(value) > 40 else ''} is not an SDL/1 device id "
                f"({whose}): 1 to 32 letters, digits, '_', '.' or '-' (docs/devices.md, 1)"
            )
        return value


def _options_mistakes(error: ValidationError) -> str:
    return "; ".join(
        f"options.{'.'.join(str(p) for p in e['loc'])}: "
        + (str(e["ctx"]["error"]) if e["type"] == "value_error" else e["msg"])
        for e in error.errors()
    )


class DeviceSettings(StrictModel):
    """One device of a table. ``port`` is a device path (``/dev/ttyUSB0``) or ``socket://host:port``."""

    id: str = Field(pattern=TOPIC_SEGMENT)
    kind: DeviceKind
    port: str = ""
    baudrate: int = Field(115200, gt=0)
    heartbeat_timeout: float = Field(5.0, gt=0, description="seconds of silence before offline")
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("port")
    @classmethod
    def _port_form(cls, port: str) -> str:
        # The drivers' transport takes these forms only; a malformed one was a "link
        # down" retried for ever. (An empty port is left to `studio config check` and
        # the drivers: the controller's own tables do without.)
        if port.startswith("socket://"):
            parts = urlsplit(port)
            try:
                number = parts.port
            except ValueError:
                number = None
            if not parts.hostname or number is None:
                raise ValueError(f"bad socket URL {port!r}: expected socket://host:port")
        elif "://" in port:
            raise ValueError(
                f"unsupported port URL {port!r}: use a device path or socket://host:port"
            )
        return port

    @model_validator(mode="after")
    def _typed_options(self) -> DeviceSettings:
        model = CameraOptions if self.kind == "camera" else SerialOptions
        try:
            typed = model.model_validate(self.options)
        except ValidationError as exc:
            raise ValueError(_options_mistakes(exc)) from exc
        if isinstance(typed, SerialOptions):
            # The drivers' codec lookup refused it at start, every table's devices with it.
            problem = protocol_problem(self.kind, typed.protocol)
            if problem is not None:
                raise ValueError(f"options.protocol: {problem}")
        return self

    @property
    def camera(self) -> CameraOptions:
        """The typed options of a camera device."""
        return CameraOptions.model_validate(self.options)


class TableSettings(StrictModel):
    id: str = Field(pattern=TOPIC_SEGMENT)
    ruleset: str | dict[str, Any] = "clubhouse"
    devices: list[DeviceSettings] = Field(default_factory=list)
    single_source: bool = Field(False, description="no camera cross-check for this table")
    camera_window_seconds: float = Field(
        3.0,
        gt=0,
        le=60,
        description="how long the shoe's card and the camera's sighting of it may be apart",
    )
    currency: str | None = Field(
        None,
        pattern=r"^[A-Z]{3}$",
        description="ISO 4217 code of the table's amounts (EUR, USD), sent in round_opened",
    )

    @field_validator("ruleset")
    @classmethod
    def _known_ruleset(cls, value: str | dict[str, Any]) -> str | dict[str, Any]:
        # Built once here so `studio config check` finds a bad preset or override, not
        # the controller's start; the spec itself is kept, as the controller takes it.
        try:
            ruleset_from_spec(value)
        except RuleSetError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @field_validator("devices")
    @classmethod
    def _unique_devices(cls, devices: list[DeviceSettings]) -> list[DeviceSettings]:
        ids = [device.id for device in devices]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"device ids must be unique within a table: {', '.join(dupes)}")
        return devices


def web_port_beside_brokers(config: StudioConfig) -> str | None:
    """A warning when the console's port is the broker's on another loopback address of
    this machine (the same address, ``localhost`` and 127.0.0.1 or ::1 included, is
    refused: ``web_port_clash``): both listen only if each server is bound to its own
    address."""
    broker, web = config.broker, config.web
    if broker.url is None or web.port != broker.port:
        return None
    if _is_loopback(broker.host) and _is_loopback(web.host):
        return (
            f"warning: web.port {web.port} is also the broker's port ({broker.url}), on "
            f"another loopback address ({web.host}): both listen only if each is bound to "
            "its own address; give web.port another unless that is meant"
        )
    return None


def tables_without_camera(config: StudioConfig) -> list[str]:
    """A warning for each table cross-checked by a camera (``single_source = false``, the
    default) that has no ``camera`` device: the shoe's every card would wait for a sighting
    none can send, a ``misscan`` that pauses the table. A warning, not a mistake: a file
    for the drivers alone (``hwsim run --config-out`` without ``--camera``) is valid; a
    table with no shoe deals no card (the controller's tests give tables no devices). Printed by ``studio config check`` and
    logged by ``studio controller run`` at its start; until 2026-12-07 neither said a word
    (an operator's review)."""
    return [
        f"warning: tables[{t}] ({table.id}): no camera device, but single_source is false: "
        "every card the shoe deals would be a misscan that pauses the table; add its camera "
        '([[tables.devices]] with kind = "camera") or set single_source = true'
        for t, table in enumerate(config.tables)
        if not table.single_source
        and any(d.kind == "shoe" for d in table.devices)
        and not any(d.kind == "camera" for d in table.devices)
    ]


def single_source_tables(config: StudioConfig) -> list[str]:
    """A note for each table dealing from a shoe with ``single_source = true``: its cards
    are not cross-checked by a camera, which regulators expect of every card (GAME-FACTS,
    two sources per card). Not a warning (``--strict`` takes it): a table whose camera is
    being repaired, a test bench, ``studio demo --cameras off`` are meant; said, so that it
    is never unknown (a regulator's review: such a table passed the check in silence)."""
    return [
        f"note: tables[{t}] ({table.id}): single_source = true: its cards are not "
        "cross-checked by a camera (regulators expect two sources for every card)"
        for t, table in enumerate(config.tables)
        if table.single_source and any(d.kind == "shoe" for d in table.devices)
    ]


def _port_key(port: str) -> tuple[str, ...]:
    """What tells two ports apart: a socket URL's host (any case) and port, else the path
    as written, normalised (``/dev//ttyUSB0`` is ``/dev/ttyUSB0``; links are not followed)."""
    if port.startswith("socket://"):
        parts = urlsplit(port)
        return ("socket", (parts.hostname or "").lower(), str(parts.port))
    return ("path", os.path.normpath(port))


class ControllerSettings(StrictModel):
    """``[controller]``: the round controller's own checks."""

    # Beyond it, a source's clock (a driver's or a camera's host, as its events' ``ts``
    # say) is told apart from the controller's: a WARNING once, an INFO once back within.
    # Logged only: nothing in play changes (docs/operations.md, *Clocks*).
    clock_skew_warning_seconds: float = Field(
        2.0,
        gt=0,
        le=86_400,
        description="seconds a source's clock may be off the controller's before a warning",
    )


class StudioConfig(StrictModel):
    broker: BrokerSettings = Field(default_factory=BrokerSettings)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    # Validated when left out too: the default web port may be the broker's.
    web: WebSettings = Field(default_factory=WebSettings, validate_default=True)
    console: ConsoleSecurity = Field(default_factory=ConsoleSecurity)
    controller: ControllerSettings = Field(default_factory=ControllerSettings)
    tables: list[TableSettings] = Field(default_factory=list)
    log_level: LogLevel = "INFO"

    @field_validator("web")
    @classmethod
    def _web_port_not_the_brokers(cls, web: WebSettings, info: ValidationInfo) -> WebSettings:
        # Taken before, the controller connected, published its state, then could not
        # listen (the broker's address was in use). A check of the web section (the broker
        # is validated before it), not of the whole model: that one ran only once every
        # other setting was valid, so config check hid it behind any other mistake, and
        # its line named no place ("(top level):").
        broker = info.data.get("broker")
        mistake = web_port_clash(broker, web) if isinstance(broker, BrokerSettings) else None
        if mistake is not None:
            raise ValueError(mistake)
        return web

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level_any_case(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("tables")
    @classmethod
    def _unique_tables(cls, tables: list[TableSettings]) -> list[TableSettings]:
        ids = [table.id for table in tables]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"table ids must be unique: {', '.join(dupes)}")
        return tables

    @field_validator("tables")
    @classmethod
    def _distinct_device_names(cls, tables: list[TableSettings]) -> list[TableSettings]:
        # Both names are derived by joining table and device id, which may hold the joint
        # themselves: tables "a-b"/"a" with devices "c"/"b-c" were both MQTT client
        # drv-a-b-c (each connection knocked the other off the broker, or a start was
        # refused naming its own pid). The names are kept as running systems know them.
        mistakes = []
        first: dict[tuple[str, str, str], str] = {}
        for t, table in enumerate(tables):
            for d, device in enumerate(table.devices):
                family = "cam" if device.kind == "camera" else "drv"
                where = f"tables[{t}].devices[{d}] ({table.id}/{device.id})"
                for what, derived in (
                    ("MQTT client id", f"{family}-{table.id}-{device.id}"),
                    ("state file", f"{table.id}__{device.id}.json"),
                ):
                    if (family, what, derived) in first:
                        mistakes.append(
                            f"{first[family, what, derived]} and {where} would have the same {what} "
                            f"{derived!r}: rename a table or a device"
                        )
                    else:
                        first[family, what, derived] = where
        if mistakes:
            raise ValueError("; ".join(mistakes))
        return tables

    @field_validator("tables")
    @classmethod
    def _one_device_per_port(cls, tables: list[TableSettings]) -> list[TableSettings]:
        # Accepted before: one driver took the port and the other kept failing, or both
        # read it and one table's shoe cards were published as the other table's.
        mistakes = []
        first: dict[tuple[str, ...], str] = {}
        for t, table in enumerate(tables):
            for d, device in enumerate(table.devices):
                if device.kind == "camera" or not device.port:
                    continue
                key = _port_key(device.port)
                where = f"tables[{t}].devices[{d}] ({table.id}/{device.id})"
                if key in first:
                    mistakes.append(
                        f"{first[key]} and {where} have the same port {device.port!r}: a port "
                        "is one device's (the second driver would fail to open it, or take "
                        "the other's frames for its own device's)"
                    )
                else:
                    first[key] = where
        if mistakes:
            raise ValueError("; ".join(mistakes))
        return tables

    def devices(self, tables: Iterable[str] | None = None) -> Iterator[tuple[str, DeviceSettings]]:
        """Every device of the tables named (all of them by default), with its table's id."""
        wanted = set(tables) if tables is not None else None
        for table in self.tables:
            if wanted is None or table.id in wanted:
                for device in table.devices:
                    yield table.id, device

    def table(self, table_id: str) -> TableSettings:
        for table in self.tables:
            if table.id == table_id:
                return table
        raise KeyError(table_id)
