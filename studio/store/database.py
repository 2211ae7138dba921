"""One database handle for SQLite and PostgreSQL: the same code runs on both."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import Any, Final
from urllib.parse import quote, quote_plus, urlencode

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.schema import CreateIndex

from studio.errors import LockLost, StoreError
from studio.filelock import FileLock
from studio.url_secrets import is_secret_parameter

_LOGGER = logging.getLogger(__name__)

metadata = sa.MetaData()

# The number of times each exclusive lock (Database.exclusive) was taken on this database:
# a holder remembers the value it wrote, and each of its appends to a chain checks, under
# the chain's writers' lock, that it is still that one. A holder whose lock was lost while
# another took it (its PostgreSQL connection dropped) is then refused, not interleaved.
controller_epochs = sa.Table(
    "controller_epochs",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("epoch", sa.BigInteger, nullable=False),
)

# Seconds between two checks that a watched exclusive lock is still held.
LOCK_WATCH_INTERVAL: Final = 1.0

# Seconds a check of a watched lock waits for its answer before it counts as a failed try
# (LOCK_CHECK_TRIES in a row: the lock is taken for lost). A database that stops answering
# (a network partition: bytes held, no reset; a server blocked) kept the check waiting until
# TCP gave up, about 15 min, the controller frozen and silent (a crash review). The check is
# not cancelled (SQLAlchemy would close the lock's connection, and the lock with it): the
# next tries wait on the same answer.
LOCK_CHECK_TIMEOUT: Final = 3 * LOCK_WATCH_INTERVAL

# Seconds the stop of a block whose lock was lost may take before it is cancelled again
# (each step still waiting: a write to a database that stopped answering), so that the
# process ends (exit status 2) and its supervisor takes over.
LOST_STOP_WAIT: Final = 5.0

# Seconds a writer waits for a chain's writers' lock (PostgreSQL). An append holds it for
# milliseconds; one held longer is a writer whose transaction hung (a process stopped,
# a connection left open), and every writer of the chain would wait until its connection
# closed. Long enough for a queue of busy writers, short enough for an admin to be told.
WRITERS_LOCK_TIMEOUT: Final = 10.0

# PostgreSQL's SQLSTATE for "canceling statement due to lock timeout".
_LOCK_NOT_AVAILABLE: Final = "55P03"

# Seconds one event log write (its whole transaction) may take beyond the writers' lock
# timeout it may wait: past it the write is abandoned (a database that stopped answering
# held it, and the controller's table, until TCP gave up: a crash review), as one the
# database refused; whether a commit sent commits is then read from the log (see
# EventLog._landed, with a limit of its own: twice the bound in all, at most). On SQLite
# it cannot interrupt the driver: SQLite's busy timeout runs first. Database(write_timeout=
# ...) sets the bound.
WRITE_MARGIN: Final = 5.0

# Seconds after which a write still waiting for the database logs a WARNING (it goes on
# waiting, up to its write timeout).
SLOW_WRITE: Final = 2.0

# Seconds a read served to a reader (a console page, a REST read: see serving_readers) may
# take, its connection's checkout and return included: past it the read is abandoned, its
# connection closed, and the reader told (a 503). A database that stopped answering held
# such a read, and a pooled connection, until the controller stopped or TCP gave up.
# Database(read_timeout=...) sets the bound.
READ_TIMEOUT: Final = 15.0

# Seconds close() waits, beyond the writers' lock timeout, for the connections still in use
# (a write in flight when a service stops) to be given back: a write waits at most that
# timeout for its lock (SQLite's busy timeout is 5 s), then runs for milliseconds.
CLOSE_MARGIN: Final = 5.0


# What to write instead of a character a user name or password cannot hold as it is.
_PERCENT_ENCODE: Final = (
    "a '@', ':', '/' or '?' in its user name or password, and an '@' after them, must be "
    "percent-encoded (%40, %3A, %2F, %3F), and a port is a number"
)


def _taken_apart(url: str) -> URL | None:
    """``url`` as SQLAlchemy takes it apart, or None when it cannot, or not cleanly.

    SQLAlchemy ends a password at its first ``@``: the rest of a password holding an
    unescaped ``@`` went to the host, port, database or query (``studio:p@ssw0rd@db``
    has the password ``p`` and the host ``ssw0rd@db``), or made the port no number
    (``ValueError``). After a password, any ``@`` is taken for such a one: no host
    holds one, and a database name or a query value can write it ``%40``. (A user
    name may hold one, ``user@server``: it ends at the first ``:``.)
    """
    try:
        parsed = make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return None
    if parsed.password is None:
        return parsed
    # The user name holds no ':' and the password no '@' (SQLAlchemy's pattern).
    after_password = url.partition("://")[2].partition(":")[2].partition("@")[2]
    return None if "@" in after_password else parsed


# PostgreSQL URL options. libpq's TLS and session options (postgresql.org/docs/current/
# libpq-connect.html), which asyncpg reads from a DSN as libpq does; SQLAlchemy's dialect
# passed each one to asyncpg.connect() as a keyword, and every command that opened the
# database ended in "TypeError: connect() got an unexpected keyword argument 'sslmode'".
_LIBPQ_OPTIONS: Final = (
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcrl",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "sslnegotiation",
    "target_session_attrs",
    "passfile",
    "krbsrvname",
    "gsslib",
)
# Translated: libpq's connect timeout (asyncpg's ``timeout``) and application name (a
# server setting).
_TRANSLATED_OPTIONS: Final = ("connect_timeout", "application_name")
# Taken by SQLAlchemy's asyncpg dialect as they are (create_connect_args): ``host`` a
# socket folder or several hosts (``host=h1:5432&host=h2:5432`` or ``host=h1,h2`` with
# ``port=5432,5432``), ``port``, ``prepared_statement_cache_size`` (0 behind PgBouncer in
# transaction mode); ``ssl`` is asyncpg's own spelling of ``sslmode``.
_DRIVER_OPTIONS: Final = (
    "host",
    "port",
    "user",
    "password",
    "ssl",
    "prepared_statement_cache_size",
    "service",
    "servicefile",
)
# asyncpg.connect()'s keywords a URL gives as text: passed on as the numbers (or yes/no)
# asyncpg takes.
_NUMBER_OPTIONS: Final = {
    "command_timeout": float,
    "timeout": float,
    "statement_cache_size": int,
    "max_cached_statement_lifetime": int,
    "max_cacheable_statement_size": int,
}
_FLAG_OPTIONS: Final = ("direct_tls",)
# Given more than once by SQLAlchemy's multi-host format.
_REPEATABLE: Final = ("host", "port")
_MAX_PORT: Final = 65535  # a TCP port is 1 to this
POSTGRES_OPTIONS: Final = (
    *_LIBPQ_OPTIONS,
    *_TRANSLATED_OPTIONS,
    *_DRIVER_OPTIONS,
    *_NUMBER_OPTIONS,
    *_FLAG_OPTIONS,
)
SSL_MODES: Final = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
_FLAGS: Final = {"true": True, "yes": True, "on": True, "1": True}
_FLAGS_OFF: Final = {"false": False, "no": False, "off": False, "0": False}


def _is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://", "postgresql+asyncpg://"))


def _postgres_options(parsed: URL) -> tuple[URL, dict[str, Any]]:
    """``parsed`` (a PostgreSQL URL) without the options the driver does not take as
    keywords, and asyncpg's connect arguments for them. Raises ``ValueError`` for an
    option not supported, given twice, or with a value it cannot take, in words naming the
    option but never its value (it may be a secret)."""
    single: dict[str, str] = {}
    for key, values in parsed.query.items():
        if key not in POSTGRES_OPTIONS:
            why = (
                " (a URL cannot give a mapping: application_name is the server setting it can)"
                if key == "server_settings"
                else ""
            )
            raise ValueError(
                f"has the option {key!r}, not supported{why}: a PostgreSQL URL takes "
                f"{', '.join(POSTGRES_OPTIONS)} (docs/security.md)"
            )
        if not isinstance(values, str):
            if key not in _REPEATABLE:
                raise ValueError(f"gives the option {key!r} more than once")
            continue
        single[key] = values
    for key in ("sslmode", "ssl"):
        if key in single and single[key] not in SSL_MODES:
            raise ValueError(f"has a bad {key}: it takes {', '.join(SSL_MODES)}")
    if "sslmode" in single and "ssl" in single:
        raise ValueError("has both sslmode and ssl: give one")
    if "connect_timeout" in single and "timeout" in single:
        raise ValueError("has both connect_timeout and timeout: give one")
    connect_args: dict[str, Any] = {}
    libpq = {key: value for key, value in single.items() if key in _LIBPQ_OPTIONS}
    if libpq:
        # Host, user and database come from the URL: asyncpg takes the DSN's query only.
        connect_args["dsn"] = "postgresql://?" + urlencode(libpq)
    if "connect_timeout" in single:
        try:
            seconds = float(single["connect_timeout"])
        except ValueError:
            seconds = 0.0
        if not 0 < seconds < float("inf"):
            raise ValueError("has a bad connect_timeout: a number of seconds > 0")
        connect_args["timeout"] = seconds
    if "application_name" in single:
        connect_args["server_settings"] = {"application_name": single["application_name"]}
    for key, kind in _NUMBER_OPTIONS.items():
        if key in single:
            try:
                number: float = kind(single[key])
            except ValueError:
                number = -1
            if not 0 <= number < float("inf") or (kind is float and number == 0):
                what = "a number of seconds > 0" if kind is float else "a whole number >= 0"
                raise ValueError(f"has a bad {key}: {what}")
            connect_args[key] = number
    for key in _FLAG_OPTIONS:
        if key in single:
            word = single[key].lower()
            if word not in _FLAGS and word not in _FLAGS_OFF:
                raise ValueError(f"has a bad {key}: true or false")
            connect_args[key] = {**_FLAGS, **_FLAGS_OFF}[word]
    kept = {
        key: values
        for key, values in parsed.query.items()
        if key in _DRIVER_OPTIONS or key in _REPEATABLE
    }
    engine_url = parsed.set(query=kept)
    # The dialect's own reading of host, port and prepared_statement_cache_size: a port
    # that is no number, the two multi-host formats mixed, a host without its port.
    try:
        _, read = PGDialect_asyncpg().create_connect_args(engine_url)  # type: ignore[no-untyped-call]
    except (sa.exc.ArgumentError, ValueError, TypeError) as exc:
        words = str(exc) if isinstance(exc, sa.exc.ArgumentError) else "is no number"
        raise ValueError(
            f"has a bad host, port or prepared_statement_cache_size ({words})"
        ) from None
    # A port it read as a number but no port (99999, one digit too many): every command
    # that opened the database ended in a traceback (OverflowError in connect). The
    # dialect leaves out a port 0 in the host part (``host:0``): asyncpg took 5432.
    ports = read.get("port")
    for port in [parsed.port, *(ports if isinstance(ports, list) else [ports])]:
        if port is not None and not 1 <= port <= _MAX_PORT:
            raise ValueError(f"has a bad port {port}: a port is 1 to {_MAX_PORT}")
    return engine_url, connect_args


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be used as it is written (no secret in the words), or None."""
    parsed = _taken_apart(url)
    if parsed is None:
        return f"cannot be taken apart as a URL: {_PERCENT_ENCODE}"
    if _is_postgres(url):
        try:
            _postgres_options(parsed)
        except ValueError as exc:
            return str(exc)
    elif parsed.get_backend_name() == "sqlite" and "uri" in parsed.query:
        # ``sqlite:///file:studio.db?mode=rwc&uri=true``: the file SQLite opened (studio.db)
        # was not the one the studio created 0600, locked and named (``file:studio.db``, an
        # empty file left beside it), and the database was made 0644.
        return (
            "has the option 'uri', not supported: SQLite's URI file names hide which file "
            "is opened (the studio creates it readable by its owner alone, and locks it); "
            "give its path, sqlite:///PATH"
        )
    return None


def url_holds_secret(url: str) -> bool:
    """Whether ``url`` holds a password: in its user part or a query parameter whose name
    says so. A URL that cannot be taken apart cleanly is taken to hold one."""
    parsed = _taken_apart(url)
    if parsed is None:
        return True
    return parsed.password is not None or any(is_secret_parameter(k) for k in parsed.query)


def safe_url(url: str) -> str:
    """``url`` with its secrets masked, for messages: its password
    (``postgresql://studio:***@host/db``) and the value of each query parameter whose name
    says it is one (``?password=***``). A URL that cannot be taken apart cleanly (an
    unescaped ``@`` in the password) is masked whole but for its scheme (``postgresql://***``).
    """
    parsed = _taken_apart(url)
    if parsed is None:
        scheme, sep, _ = url.partition("://")
        return f"{scheme}://***" if sep and "@" not in scheme else "***"
    text = parsed.set(query={}).render_as_string(hide_password=True)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        # The path as SQLite opens it: SQLAlchemy percent-encodes it (a ':' as '%3A', so
        # sqlite:///%3Amemory%3A for sqlite:///:memory:); no secret is in it.
        bare = parsed.set(query={})._replace(database=None)
        text = f"{bare.render_as_string(hide_password=True)}/{parsed.database}"
    if not parsed.query:
        return text
    query = "&".join(
        f"{quote_plus(key)}={'***' if is_secret_parameter(key) else quote_plus(value)}"
        for key, values in parsed.query.items()
        for value in ((values,) if isinstance(values, str) else values)
    )
    return f"{text}?{query}"


def reason(exc: BaseException) -> str:
    """An error of the database as a person reads it: SQLAlchemy's wrapper class and its
    "Background on this error at: https://sqlalche.me/..." line left out."""
    text = str(exc)
    text = re.sub(r"\s*\(Background on this error at: [^)]*\)", "", text)
    text = re.sub(r"^\((?:sqlalchemy|asyncpg|sqlite3)[\w.]*\) ", "", text).strip()
    if not text and isinstance(exc, TimeoutError):
        # (a connect that timed out says nothing: "cannot open database ...: " was all)
        return "the database gave no answer (its connection timed out)"
    return text or type(exc).__name__


def database_words(exc: BaseException) -> str:
    """A database error in words for whoever asked (a REST answer, a console page, an
    input's refusal): a connection lost, refused or unreachable is "the database connection
    failed", any other error the driver's own message. Never SQLAlchemy's text, which holds
    the statement and its parameters (a session token's digest, a password's hash), nor an
    OSError's address (``Connect call failed ('10.0.0.5', 5432)``): a 503 carried both (a
    review). The whole error is for the log (:func:`log_database_error`)."""
    orig = getattr(exc, "orig", None)
    cause = orig if isinstance(orig, BaseException) else exc
    if isinstance(cause, TimeoutError):
        return "the database gave no answer in time"
    if (
        isinstance(cause, OSError)
        or getattr(exc, "connection_invalidated", False)
        or isinstance(exc, sa.exc.DisconnectionError)
    ):
        return "the database connection failed"
    if cause is not exc:
        return str(cause) or type(cause).__name__
    if isinstance(exc, sa.exc.StatementError):  # SQLAlchemy's own, its text the statement's
        return type(exc).__name__
    return reason(exc)  # (never empty: the class name when the error has no words)


def log_database_error(what: str, exc: BaseException) -> None:
    """A WARNING with the database's whole error, as :func:`database_words` does not give
    it: the driver's class and message and the statement, without its parameters (a
    password's hash, a session token's digest are kept out of the log too)."""
    if isinstance(exc, sa.exc.StatementError) and exc.statement is not None:
        orig = exc.orig
        said = f"{type(orig).__name__}: {orig}" if orig is not None else type(exc).__name__
        text = f"{said} [SQL: {' '.join(exc.statement.split())}]"
    else:
        text = f"{type(exc).__name__}: {exc}"
    _LOGGER.warning("%s: %s", what, text)


def _check_url(url: str) -> None:
    problem = url_problem(url)
    if problem is not None:
        raise StoreError(f"database url {safe_url(url)} {problem}")


def async_url(url: str) -> str:
    """Map the configured URL to the async driver SQLAlchemy needs."""
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+asyncpg://" + url.split("://", 1)[1]
    if url.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
        return url
    raise StoreError(
        f"unsupported database url {safe_url(url)!r}: use sqlite:///PATH or postgresql://..."
    )


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names, as SQLite opens it (a relative path is from the working
    directory); None for PostgreSQL and for an in-memory database. Raises
    :class:`StoreError` for a URL :func:`async_url` does not take, or one that cannot be
    taken apart (:func:`url_problem`)."""
    target_url = async_url(url)
    _check_url(url)
    target = make_url(target_url)
    if target.get_backend_name() != "sqlite" or target.database in (None, "", ":memory:"):
        return None
    return Path(target.database)


IN_MEMORY = (
    "database.url is a SQLite database in memory: the event log, every round and alert "
    "would be lost when the controller stops; give a file (sqlite:///PATH) or PostgreSQL"
)


class ReadTimedOut(StoreError):
    """A read served to a reader (or a write on its way, :meth:`Database.changing`) got no
    answer from the database within its handle's ``read_timeout``; its connection was
    closed, not given back to the pool."""


# The task serving a reader's request (set by serving_readers): the reads it awaits itself
# are bounded; those of the tasks it starts (the controller's own work) are not.
_READER_TASK: ContextVar[asyncio.Task[Any] | None] = ContextVar("studio_reader_task", default=None)


@contextlib.contextmanager
def serving_readers() -> Iterator[None]:
    """While the block runs, each database read the current task awaits through
    :meth:`Database.reading` is bounded by its handle's ``read_timeout`` (the web layer
    wraps each HTTP request in it). Only this task's: a task it starts copies the context
    but is another task, and the controller's work it hands a request to (an input, a
    table's rebuild) keeps no bound, as its start's replay: a slow but sound database must
    not fail it, and the lock's watch stops a controller whose database stopped answering."""
    token = _READER_TASK.set(asyncio.current_task())
    try:
        yield
    finally:
        _READER_TASK.reset(token)


def _serving_a_reader() -> bool:
    task = _READER_TASK.get()
    return task is not None and task is asyncio.current_task()


def kept_nowhere(url: str) -> bool:
    """A SQLite database in memory (``sqlite:///:memory:``, or no path): it ends with the
    process, and every record of play with it. The demo may take one; the controller not."""
    try:
        target = make_url(async_url(url))
    except (StoreError, ValueError):
        return False  # refused elsewhere, in its own words
    return target.get_backend_name() == "sqlite" and target.database in (None, "", ":memory:")


class Database:
    """An async engine plus the schema; ``schema`` isolates a PostgreSQL namespace (tests)."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        writers_lock_timeout: float = WRITERS_LOCK_TIMEOUT,
        write_timeout: float | None = None,
        read_timeout: float = READ_TIMEOUT,
        read_only: bool = False,
    ) -> None:
        """``read_only`` (the audit's reads): a SQLite file is opened read-only (SQLite's
        ``mode=ro``) and without the pragmas that write (``journal_mode=WAL`` turned a
        backup in ``delete`` mode into WAL, its checksum changed), nor its folder made; a
        read-only copy can be read. PostgreSQL: no difference (the audit only reads).
        ``write_timeout``: the seconds an event log write may take, its wait for the
        writers' lock included (default: ``writers_lock_timeout`` + :data:`WRITE_MARGIN`).
        ``read_timeout``: the seconds a read served to a reader may take (see
        :meth:`reading`)."""
        self.url = url
        self.schema = schema
        self.read_only = read_only
        if not writers_lock_timeout > 0:  # PostgreSQL's lock_timeout 0 is no bound at all
            raise StoreError(
                f"writers_lock_timeout is a number of seconds > 0, not {writers_lock_timeout}"
            )
        self.writers_lock_timeout = writers_lock_timeout
        if write_timeout is None:
            write_timeout = writers_lock_timeout + WRITE_MARGIN
        if not write_timeout > 0:
            raise StoreError(f"write_timeout is a number of seconds > 0, not {write_timeout}")
        self.write_timeout = write_timeout
        if not read_timeout > 0:
            raise StoreError(f"read_timeout is a number of seconds > 0, not {read_timeout}")
        self.read_timeout = read_timeout
        # Refused, not tried: SQLAlchemy raised a ValueError holding the rest of the
        # password, or connected to a "host" that was the rest of it.
        target = async_url(url)
        _check_url(url)
        connect_args: dict[str, Any] = {}
        engine_url: str | URL = target
        # An in-memory database: SQLAlchemy shares ONE connection between every checkout
        # (StaticPool), so a read that gave it back rolled back another task's open
        # append, whose commit then committed nothing (records published, not logged). A
        # private scratch file, removed with this handle, has a file's pool and
        # transactions and, as memory, outlives nothing.
        self.scratch: Path | None = None
        if target.startswith("sqlite") and not read_only and kept_nowhere(url):
            self.scratch = _scratch_folder()
            weakref.finalize(self, shutil.rmtree, self.scratch, ignore_errors=True)
            engine_url = f"sqlite+aiosqlite:///{self.scratch / 'studio.db'}"
        elif target.startswith("sqlite") and read_only:
            engine_url = _read_only_sqlite(target)
        elif target.startswith("sqlite"):
            path = target.split(":///", 1)[1]
            if path and path != ":memory:":
                try:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(
                        f"cannot open database {safe_url(url)}: {reason(exc)}"
                    ) from exc
        else:
            engine_url, connect_args = _postgres_options(make_url(target))
            if schema:
                connect_args["server_settings"] = {
                    **connect_args.get("server_settings", {}),
                    "search_path": schema,
                }
        self.is_sqlite = target.startswith("sqlite")
        # PostgreSQL: each connection the pool hands out is tried first (a round trip). A
        # server restart, a failover, idle_session_timeout or pg_terminate_backend ended
        # the pool's idle connections, and the first append after it failed ("connection
        # is closed": an input refused, its table rebuilt) before SQLAlchemy dropped them.
        self.engine: AsyncEngine = create_async_engine(
            engine_url, connect_args=connect_args, pool_pre_ping=not self.is_sqlite
        )
        if self.is_sqlite and read_only:
            event.listen(self.engine.sync_engine, "connect", _lenient_text)
        if self.is_sqlite and not read_only:
            pragmas = (
                functools.partial(_sqlite_pragmas, synchronous="OFF")
                if self.scratch
                else _sqlite_pragmas
            )
            event.listen(self.engine.sync_engine, "connect", pragmas)
            file = sqlite_file(url)
            if file is not None:
                event.listen(
                    self.engine.sync_engine, "do_connect", lambda *_: _create_private(file)
                )
        # The pool's connections handed out and not yet given back (a set: a failed connect
        # is checked in without having been checked out).
        self._in_use: set[object] = set()
        # While close() waits: its loop and the event to set once none is in use.
        self._all_back: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        # The exclusive locks this handle holds, and the start (epoch) each is: its appends
        # check it (see exclusive).
        self._fences: dict[str, int] = {}
        sync_engine = self.engine.sync_engine
        event.listen(sync_engine, "checkout", lambda _c, record, _p: self._in_use.add(record))
        event.listen(sync_engine, "checkin", self._checked_in)

    @property
    def in_use(self) -> int:
        """How many connections are handed out now (transactions and reads under way)."""
        return len(self._in_use)

    def _checked_in(self, _dbapi_connection: Any, record: object) -> None:
        self._in_use.discard(record)
        waiting = self._all_back
        if waiting is not None and not self._in_use:
            # Thread-safe: a connection the garbage collector finalises is given back there.
            loop, all_back = waiting
            loop.call_soon_threadsafe(all_back.set)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """A connection for a read, given back when the block ends.

        In a task serving a reader (:func:`serving_readers`: the console's and the REST
        API's requests) the whole block is bounded by ``read_timeout``: the connection's
        checkout (its pre-ping), the statements and its return. Past it the read is
        abandoned: SQLAlchemy closes a connection cancelled in a statement instead of
        giving it back to the pool (it is in an unknown state), and a
        :class:`ReadTimedOut` says so. Any other error of the database (its connection
        reset, refused: the server away) is a :class:`StoreError` in words fit for the
        reader (:func:`database_words`, the whole error logged), a 503 as a stall's: it
        reached the reader as the driver's own error, an Internal Server Error (a review).
        Elsewhere (the controller's start and replays, the command line) a plain
        connection, without a bound, its errors the driver's.
        """
        async with self._for_reader("read") as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def changing(self) -> AsyncIterator[AsyncConnection]:
        """A transaction for a small write a reader's request makes on its way (a console
        session's ``last_seen``, a logout), committed when the block ends, as
        ``engine.begin()``'s. In a task serving a reader bounded as :meth:`reading` is
        (``read_timeout``, its COMMIT inside the bound; ``database write failed: ...``):
        unbounded, a database blocked on a lock or its disk held every console page on
        the session's touch though its reads answered (a review). Elsewhere unbounded."""
        async with self._for_reader("write") as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def _for_reader(self, what: str) -> AsyncIterator[AsyncConnection]:
        """A connection whose block ends in a ROLLBACK (``what`` "read") or a COMMIT
        ("write"), bounded in a task serving a reader (see :meth:`reading`)."""
        if not _serving_a_reader():
            async with self.engine.connect() as conn:
                yield conn
                if what == "write":
                    await conn.commit()
            return
        bound = asyncio.timeout(self.read_timeout)
        try:
            async with bound:
                async with self.engine.connect() as conn:
                    yield conn
                    # Ended here, inside the bound: the ROLLBACK that SQLAlchemy sends as it
                    # gives the connection back is run to its end, cancelled or not, and a
                    # database that stopped answering held it there.
                    await (conn.commit() if what == "write" else conn.rollback())
        except (OSError, sa.exc.SQLAlchemyError) as exc:  # (TimeoutError is an OSError)
            if not bound.expired():
                log_database_error(f"database {what} failed", exc)
                raise StoreError(f"database {what} failed: {database_words(exc)}") from exc
            _LOGGER.warning(
                "database %s: no answer from the database in %g s; cut short, its "
                "connection closed",
                what,
                self.read_timeout,
            )
            raise ReadTimedOut(
                f"database {what} failed: the database gave no answer in {self.read_timeout:g} s"
            ) from exc

    async def create_all(self) -> None:
        try:
            async with self.engine.begin() as conn:
                if self.schema and not self.is_sqlite:
                    await conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"'))
                await conn.run_sync(_create_schema)
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"cannot open database {safe_url(self.url)}: {reason(exc)}") from exc

    async def table_names(self) -> set[str]:
        """The tables the database (its schema, on PostgreSQL) holds, creating nothing: for
        commands that must not make a studio database of one that is not."""
        try:
            async with self.engine.connect() as conn:
                names = await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names())
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"cannot open database {safe_url(self.url)}: {reason(exc)}") from exc
        return set(names)

    async def lock_writers(self, conn: AsyncConnection, name: str) -> None:
        """Hold the writers' lock ``name`` until ``conn``'s transaction ends.

        Call it as the transaction's first statement; every writer that must not interleave
        with another (the appenders of one hash chain) takes the same ``name``.
        PostgreSQL: a transaction-level advisory lock on a key derived from the schema and
        ``name``; the next holder's statements (READ COMMITTED) see what this one committed.
        It waits at most ``writers_lock_timeout`` seconds (the transaction's
        ``lock_timeout``, set in the same statement: no extra round trip), then raises a
        :class:`StoreError`; the transaction is then aborted, to be rolled back.
        SQLite has one write lock per database: ``BEGIN IMMEDIATE`` takes it at once instead
        of at the first write (the driver begins transactions lazily), waiting up to the
        driver's 5 s busy timeout; past it, an ``OperationalError`` "database is locked".
        While this handle holds an exclusive lock, a :class:`LockLost` if another process
        took it since (see :meth:`exclusive`).
        """
        if self.is_sqlite:
            await conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            await self._lock_writers_postgres(conn, name)
        if self._fences:
            await self._check_fences(conn)

    async def _lock_writers_postgres(self, conn: AsyncConnection, name: str) -> None:
        # The select list is evaluated in order: the bound is set before the wait begins.
        # It holds for the rest of the transaction (is_local), whose appends wait on no
        # other lock but a writer's that does not take this one (an older version).
        bound = f"{max(1, round(self.writers_lock_timeout * 1000))}ms"
        lock = sa.select(
            sa.func.set_config("lock_timeout", bound, True),
            sa.func.pg_advisory_xact_lock(self._lock_key(name)),
        )
        try:
            await conn.execute(lock)
        except sa.exc.DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                raise
            raise StoreError(
                f"{name}: another writer has held the writers' lock for "
                f"{self.writers_lock_timeout:g} s (a transaction left open?); nothing was "
                "written, try again"
            ) from exc

    @contextlib.asynccontextmanager
    async def exclusive(self, name: str, *, watch: float | None = None) -> AsyncIterator[None]:
        """Hold the database's lock ``name`` while the block runs; raise :class:`StoreError`
        at once if another process holds it (one controller per event log).

        PostgreSQL: a session advisory lock on a connection kept for the block (committed:
        the session sits idle, holding no snapshot); it goes with the connection, so a
        process killed, or cut off from the database, leaves none behind. SQLite: an
        ``flock`` on a file beside the database (``studio.db.studio-controller.lock``,
        holding the pid), which the kernel releases when the process dies. An in-memory
        database is one process's alone: nothing to hold.

        Fenced: taking it counts one more start of ``name`` (``controller_epochs``), and
        while the block runs every append of this handle to a chain checks, under the
        chain's writers' lock, that no later start took it (:class:`LockLost` if one did).
        PostgreSQL drops the lock with its connection (a server restart, a network cut,
        ``idle_session_timeout``) without a word to this process: a second controller then
        started, and the two wrote the same rounds' ends.

        ``watch``: check every ``watch`` s that the lock is still held and no other start
        took it (the lock connection answers and holds it; the lock file is still the one
        locked); once it is not, the task that entered the block is cancelled (as a stop
        signal does) and the block ends in :class:`LockLost`. Taking it again is not safe
        (another may have run meanwhile): the process stops, its supervisor restarts it.
        """
        if self.is_sqlite:
            path = sqlite_file(self.url)
            if path is None:
                yield
                return
            # Beside the file itself: through a symbolic link to it (or a link in its
            # path, or a relative path) it is the same lock (see _real_file).
            path = _real_file(path, safe_url(self.url))
            lock = path.with_name(f"{path.name}.{'-'.join(name.split())}.lock")
            with _file_lock(lock, name, safe_url(self.url)) as locked:
                # A database not made yet is not made by the lock: it has no log to fence.
                fenced = path.exists()
                held = functools.partial(_file_still_held, lock, locked)
                async with self._fenced(name, None, held, watch, count=fenced):
                    yield
            return
        key = self._lock_key(f"exclusive:{name}")
        try:
            conn = await self.engine.connect()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"cannot open database {safe_url(self.url)}: {reason(exc)}") from exc
        try:
            got = (await conn.execute(sa.select(sa.func.pg_try_advisory_lock(key)))).scalar()
            await conn.commit()
            if not got:
                raise StoreError(
                    f"another {name} is running on database {safe_url(self.url)}: stop it first"
                )
            try:
                async with self._fenced(name, conn, _AdvisoryLockCheck(conn, key), watch):
                    yield
            finally:
                # Bounded: a database that stopped answering held the stop here (TimeoutError
                # is an OSError; the connection is then closed, and the lock goes with it).
                with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                    async with asyncio.timeout(LOCK_CHECK_TIMEOUT):
                        await conn.execute(sa.select(sa.func.pg_advisory_unlock(key)))
                        await conn.commit()
        finally:
            with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                async with asyncio.timeout(LOCK_CHECK_TIMEOUT):
                    await conn.close()

    @contextlib.asynccontextmanager
    async def _fenced(
        self,
        name: str,
        conn: AsyncConnection | None,
        holding: Callable[[], Awaitable[str | None]],
        watch: float | None,
        *,
        count: bool = True,
    ) -> AsyncIterator[None]:
        """With the lock ``name`` just taken: count this start, fence this handle's appends
        with it while the block runs, and watch the lock every ``watch`` s if given.
        ``count=False``: none of this but the watch of ``holding``."""
        epoch = await self._next_epoch(name, conn) if count else None
        if epoch is not None:
            self._fences[name] = epoch
        try:
            if watch is None:
                yield
                return

            async def lost() -> str | None:
                why = await holding()
                if why is None and epoch is not None:
                    stored = await self._stored_epoch(name, conn)
                    if stored is not None and stored != epoch:
                        why = (
                            f"another {name} started on it since (start {stored}, this one {epoch})"
                        )
                return why

            what = f"{name}: the lock on database {safe_url(self.url)} was lost"
            async with _watched(lost, watch, what):
                yield
        finally:
            self._fences.pop(name, None)

    async def _next_epoch(self, name: str, conn: AsyncConnection | None) -> int:
        """Count one more start of ``name``; its number. On ``conn`` (PostgreSQL's lock
        connection), else a transaction of its own. Its UPDATE waits for an append holding
        the row (see _check_fences): the appends of the last holder commit before it, or
        are refused after."""
        row = controller_epochs.c

        async def count(c: AsyncConnection) -> int:
            # A database made before the table: made here, under the lock just taken.
            await c.run_sync(lambda sync: controller_epochs.create(sync, checkfirst=True))
            done = await c.execute(
                sa.update(controller_epochs).where(row.name == name).values(epoch=row.epoch + 1)
            )
            if not done.rowcount:
                await c.execute(sa.insert(controller_epochs).values(name=name, epoch=1))
            epoch = (await c.execute(sa.select(row.epoch).where(row.name == name))).scalar_one()
            return int(epoch)

        try:
            if conn is None:
                async with self.engine.begin() as own:
                    return await count(own)
            try:
                epoch = await count(conn)
                await conn.commit()
            except BaseException:
                with contextlib.suppress(sa.exc.SQLAlchemyError, OSError):
                    await conn.rollback()
                raise
            return epoch
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(
                f"cannot take the {name} lock on database {safe_url(self.url)}: {reason(exc)}"
            ) from exc

    async def _stored_epoch(self, name: str, conn: AsyncConnection | None) -> int | None:
        """The last start of ``name`` the database holds; None when it cannot be read now
        (on SQLite: a read that failed is tried again at the next check)."""
        query = sa.select(controller_epochs.c.epoch).where(controller_epochs.c.name == name)
        try:
            if conn is None:
                async with self.engine.connect() as own:
                    return (await own.execute(query)).scalar()
            epoch = (await conn.execute(query)).scalar()
            await conn.commit()
            return epoch
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            if conn is not None:
                # Its transaction is aborted: left so, the lock's own check failed next and
                # stopped a controller that still held its lock (a review: a DBA's lock on
                # the table made one read time out).
                with contextlib.suppress(OSError, sa.exc.SQLAlchemyError):
                    await conn.rollback()
            _LOGGER.warning("%s: the lock's start count not read: %s", name, reason(exc))
            return None

    async def _check_fences(self, conn: AsyncConnection) -> None:
        """In an append's transaction, under the chain's writers' lock: refuse it if a start
        of an exclusive lock this handle holds came after its own (it lost the lock)."""
        row = controller_epochs.c
        query = sa.select(row.name, row.epoch).where(row.name.in_(sorted(self._fences)))
        if not self.is_sqlite:
            # A share lock on the row: a start counting itself (UPDATE) waits for this
            # transaction, or this one, read after it committed, sees its count. (SQLite:
            # BEGIN IMMEDIATE already orders the two.)
            query = query.with_for_update(read=True)
        stored = {name: epoch for name, epoch in (await conn.execute(query)).all()}
        for name, epoch in self._fences.items():
            if stored.get(name) != epoch:
                raise LockLost(
                    f"{name}: not written: another {name} started on database "
                    f"{safe_url(self.url)} since this one (start {stored.get(name)}, this one "
                    f"{epoch}); this one lost its lock and must stop"
                )

    def _lock_key(self, name: str) -> int:
        # Advisory locks are per database, not per schema: tests share one database.
        digest = hashlib.sha256(f"studio:{self.schema or ''}:{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)

    async def close(self, wait: float | None = None) -> None:
        """Close the database's connections once the work under way on it has ended.

        A write in flight (an append whose caller was cancelled by a stop is shielded and
        goes on) commits before the pool is disposed: disposing closes only the idle
        connections, and the event loop's end would cut the others off, their transaction
        lost. After ``wait`` s (default: the writers' lock timeout + :data:`CLOSE_MARGIN`)
        the pool is disposed all the same, with a warning. As SQLAlchemy's ``dispose``, it
        leaves the database usable: what uses it afterwards opens a connection again, which
        the owner must close in turn (a service stopping must not start work after it);
        but an in-memory database's scratch file is removed: what it held is gone, as when
        memory's last connection closes.
        """
        if wait is None:
            wait = self.writers_lock_timeout + CLOSE_MARGIN
        if self._in_use:
            all_back = asyncio.Event()
            self._all_back = (asyncio.get_running_loop(), all_back)
            try:
                async with asyncio.timeout(wait):
                    await all_back.wait()
            except TimeoutError:
                _LOGGER.warning(
                    "database %s: closed with %d connections still in use after %g s; "
                    "their transactions are rolled back",
                    safe_url(self.url),
                    len(self._in_use),
                    wait,
                )
            finally:
                self._all_back = None
        await self.engine.dispose()
        if self.scratch is not None:
            # As an in-memory database's connection closing: its records are gone.
            shutil.rmtree(self.scratch, ignore_errors=True)

    async def __aenter__(self) -> Database:
        await self.create_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def rows_in_pages(
    db: Database, table: sa.Table, keys: list[sa.Column[Any]], size: int = 5000
) -> AsyncIterator[sa.Row[Any]]:
    """Every row of ``table`` in the order of ``keys`` (its primary key), read ``size`` at a
    time: an index with a row per round or command ever played is not read whole."""
    after: tuple[Any, ...] | None = None
    while True:
        query = sa.select(table).order_by(*keys).limit(size)
        if after is not None:
            query = query.where(sa.tuple_(*keys) > sa.tuple_(*after))
        async with db.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        if after is not None:
            # A key that is no UTF-8 text (SQLite, read by the audit: see _lenient_text)
            # reads back as another, and its row came again after it: for ever.
            rows = [row for row in rows if tuple(getattr(row, k.name) for k in keys) != after]
        if not rows:
            return
        for row in rows:
            yield row
        after = tuple(getattr(rows[-1], key.name) for key in keys)


def _create_schema(conn: sa.Connection) -> None:
    """Create the missing tables, then the missing indexes of every table.

    ``metadata.create_all`` creates a table's indexes only with the table, so an index a
    newer version declares on a table an older one created would never be made. ``IF NOT
    EXISTS`` (by name, SQLite and PostgreSQL alike) leaves those already there alone: running
    it again is harmless. The first start after such an upgrade builds the index over the
    rows already in the table, holding its writes until done (seconds for millions of rows).
    """
    metadata.create_all(conn)
    for table in metadata.sorted_tables:
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            conn.execute(CreateIndex(index, if_not_exists=True))


def _real_file(path: Path, database: str) -> Path:
    """``path`` with every symbolic link in it resolved (the file SQLite opens), made
    absolute from the working directory; a file not there yet is where it will be made.

    The lock was named from the path as given: a controller on ``link.db``, a symbolic
    link to ``studio.db``, took ``link.db.studio-controller.lock`` while another held
    ``studio.db.studio-controller.lock``, and both appended to one event log. A hard link
    is another name of the same file that no path resolves to: it is not covered.
    """
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links (RuntimeError until 3.13)
        raise StoreError(f"cannot open database {database}: {exc}") from exc


@contextlib.contextmanager
def _file_lock(path: Path, name: str, database: str) -> Iterator[tuple[int, int]]:
    """The :class:`FileLock` on ``path`` while the block runs (see Database.exclusive);
    the block is given the locked file's device and inode."""
    lock = FileLock(path)
    try:
        taken = lock.acquire()
    except OSError as exc:
        raise StoreError(f"cannot open {path} to lock database {database}: {exc}") from exc
    if not taken:
        pid = lock.holder()
        held = f" (pid {pid})" if pid is not None else ""
        raise StoreError(
            f"another {name}{held} is running on database {database} (it holds {path}): "
            "stop it first"
        )
    try:
        try:
            # The file just locked (a removal between the lock and this stat is found by
            # the first check, its inode then another or none).
            stat = os.stat(path)
        except OSError as exc:
            raise StoreError(f"cannot open {path} to lock database {database}: {exc}") from exc
        yield stat.st_dev, stat.st_ino
    finally:
        lock.release()


async def _file_still_held(path: Path, locked: tuple[int, int]) -> str | None:
    """Why the lock on ``path`` is no longer this process's, or None. An ``flock`` stays
    held while the process lives; but a lock file removed (or replaced) is one the next
    process creates anew and locks too."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return f"its lock file {path} was removed"
    except OSError:
        return None  # not readable now: the start count is still checked
    if (stat.st_dev, stat.st_ino) != locked:
        return f"its lock file {path} was replaced"
    return None


# Whether this session holds the advisory lock with the bigint key :key (PostgreSQL shows
# such a key as classid, its upper 32 bits, and objid, its lower; objsubid 1).
_HOLDS_ADVISORY_LOCK: Final = sa.text(
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND pid = pg_backend_pid() AND objsubid = 1 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND ((classid::bigint << 32) | objid::bigint) = :key)"
)


# A check of the advisory lock that fails without its connection being gone (a statement
# timeout, a DBA's pg_cancel_backend, a lock wait) is tried again this many times in a row
# before the lock is given up for lost; the fence refuses writes meanwhile if it was.
LOCK_CHECK_TRIES = 3


class _AdvisoryLockCheck:
    """Why ``conn``'s session no longer holds the advisory lock ``key``, or None."""

    def __init__(self, conn: AsyncConnection, key: int) -> None:
        self.conn, self.key, self.failures = conn, key, 0

    async def __call__(self) -> str | None:
        try:
            held = (await self.conn.execute(_HOLDS_ADVISORY_LOCK, {"key": self.key})).scalar()
            await self.conn.commit()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            with contextlib.suppress(OSError, sa.exc.SQLAlchemyError):
                await self.conn.rollback()  # an aborted transaction failed every later check
            # The driver's words alone: SQLAlchemy's add the statement.
            cause = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig else exc
            words = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
            gone = (
                isinstance(exc, OSError)
                or bool(getattr(exc, "connection_invalidated", False))
                or self.conn.closed
                or self.conn.invalidated
            )
            if gone:
                return f"the connection holding it was lost ({words})"
            self.failures += 1
            if self.failures >= LOCK_CHECK_TRIES:
                return f"its check failed {self.failures} times in a row ({words})"
            _LOGGER.warning("the database lock's check failed (%s); trying again", words)
            return None
        self.failures = 0
        return None if held else "PostgreSQL no longer holds it for this process"


@contextlib.asynccontextmanager
async def _watched(
    lost: Callable[[], Awaitable[str | None]],
    every: float,
    what: str,
    *,
    check_timeout: float = LOCK_CHECK_TIMEOUT,
    stop_wait: float = LOST_STOP_WAIT,
) -> AsyncIterator[None]:
    """Ask ``lost()`` every ``every`` s while the block runs; once it answers why, cancel
    the task running the block and end the block in :class:`LockLost` (``what: why``).
    An answer not come in ``check_timeout`` s is a failed try; :data:`LOCK_CHECK_TRIES` in a
    row are a lost lock. Once lost, the block's stop is cancelled again every
    ``stop_wait`` s until it ends (a write hung on a database that stopped answering).

    As a task group does with a failed task, but the block ends in the error itself (no
    group): the process's entry point prints it and exits non-zero.
    """
    host = asyncio.current_task()
    if host is None:
        raise RuntimeError("_watched needs a task")
    why: list[str] = []
    cancels = [0]  # the watch's cancels of the host (each one is taken back at the end)

    async def watch() -> None:
        pending: asyncio.Task[str | None] | None = None
        late = 0
        try:
            while True:
                await asyncio.sleep(every)
                # A check that got no answer in time is a failed try, and is waited on
                # again (not asked again: one question at a time on the lock's connection).
                if pending is None:
                    pending = asyncio.ensure_future(lost())
                done, _ = await asyncio.wait([pending], timeout=check_timeout)
                if done:
                    found, pending, late = pending.result(), None, 0
                else:
                    late += 1
                    if late < LOCK_CHECK_TRIES:
                        _LOGGER.warning(
                            "%s: the database lock's check got no answer in %g s (the "
                            "database is not answering?); waiting on",
                            what.partition(":")[0],
                            check_timeout,
                        )
                        continue
                    found = (
                        f"its check got no answer in {late} tries of {check_timeout:g} s (the "
                        "database stopped answering)"
                    )
                if found is not None:
                    why.append(found)
                    _LOGGER.error("%s: %s; stopping now", what, found)
                    cancels[0] += host.cancel()
                    break
            # The stop, bounded: a step still waiting on the database after stop_wait s is
            # cancelled (again), so that the process ends and its supervisor takes over.
            while True:
                await asyncio.sleep(stop_wait)
                _LOGGER.error(
                    "%s: its stop still waits after %g s (on the database?); cutting it short",
                    what.partition(":")[0],
                    stop_wait,
                )
                cancels[0] += host.cancel()
        finally:
            if pending is not None:
                pending.cancel()  # SQLAlchemy closes its connection: the lock goes with it
                await asyncio.wait([pending])

    watcher = asyncio.create_task(watch(), name="exclusive-lock-watch")
    try:
        yield
    except asyncio.CancelledError:
        # Cancelled by the watch alone: the stop it asked for. A stop signal as well: that.
        if not why or _uncancel(host, cancels[0]) > 0:
            raise
        raise LockLost(f"{what}: {why[0]}") from None
    except Exception as exc:  # what the block's stop ran into (a write refused, fenced)
        if not why:
            raise
        _uncancel(host, cancels[0])
        raise LockLost(f"{what}: {why[0]}") from exc
    else:
        if why:
            _uncancel(host, cancels[0])
            raise LockLost(f"{what}: {why[0]}")
    finally:
        watcher.cancel()
        await asyncio.wait([watcher])


def _uncancel(task: asyncio.Task[Any], times: int) -> int:
    """Take back ``times`` cancels of ``task``; the cancels requested left (a stop signal's)."""
    left = task.cancelling()
    for _ in range(times):
        left = task.uncancel()
    return left


def _undecoded(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _lenient_text(dbapi_connection: Any, _record: object) -> None:
    """The audit's connections read text that is no UTF-8 (SQLite keeps any bytes in a
    text column: a damaged row, one written by hand) with U+FFFD for each byte that is not:
    the driver's "Could not decode to UTF-8" failed the whole read, and ``studio audit
    verify`` ended in a traceback. The value then differs from what was written, and the
    check that reads it says so (the chain's walk reads the bytes: it names the column)."""
    dbapi_connection.driver_connection.text_factory = _undecoded


def _read_only_sqlite(target: str) -> URL:
    """The SQLite URL ``target`` (``sqlite+aiosqlite:///PATH``) as a read-only SQLite URI
    (``file:PATH?mode=ro``, the path percent-encoded); an in-memory database as it is."""
    parsed = make_url(target)
    path = parsed.database
    if not path or path == ":memory:" or parsed.query.get("uri"):
        return parsed
    return parsed.set(
        database="file:" + quote(str(Path(path).absolute()), safe="/"),
        query={**parsed.query, "mode": "ro", "uri": "true"},
    )


def _create_private(path: Path) -> None:
    """Create the SQLite file ``path``, if missing, readable by its owner alone (0600): it
    holds the console's password hashes and session tokens, and SQLite made it 0644 (the
    umask's). SQLite gives its ``-wal`` and ``-shm`` files the database file's mode. A file
    already there keeps its own."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


SCRATCH_PREFIX: Final = "studio-memory-"


def _scratch_folder() -> Path:
    """A new private folder (0700) for an in-memory database's scratch file, holding the
    file ``pid`` that names this process; the folders in the same temporary directory
    that processes gone left (killed: SIGKILL, or SIGTERM unhandled) are removed first.
    What they hold (a manager's password hash, session tokens) outlived its process."""
    folder = Path(tempfile.gettempdir())
    _remove_stale_scratch(folder)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=folder))
    (scratch / "pid").write_text(f"{os.getpid()}\n", encoding="ascii")
    return scratch


def _remove_stale_scratch(folder: Path) -> None:
    """Remove the scratch folders in ``folder`` that are this user's and whose ``pid``
    names no live process. Symbolic links are not followed; a folder without a readable
    ``pid`` (being made, or by another kind of writer) is left; errors are ignored."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(SCRATCH_PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):  # a symbolic link is not
                continue
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(entry.path, "pid"), os.O_RDONLY | os.O_NOFOLLOW)
            try:
                pid = int(os.read(fd, 32).decode("ascii").strip())
            finally:
                os.close(fd)
            if pid <= 0 or _alive(pid):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
        except (OSError, ValueError, OverflowError):  # OverflowError: a pid too large
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _sqlite_pragmas(dbapi_connection: Any, _record: Any, *, synchronous: str = "FULL") -> None:
    # WAL keeps readers (console, REST) off the writer's back. FULL syncs the WAL at every
    # commit: NORMAL survives a process crash (kill -9) but a power cut or an OS crash
    # may roll back the last commits, whose outputs (a settlement) were already published.
    # (OFF for an in-memory database's scratch file: nothing in it survives the process.)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={synchronous}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
