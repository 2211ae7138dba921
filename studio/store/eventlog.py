"""The hash-chained event log.

Every input the controller accepts and every output it produces is appended as
one record. Each record's ``hash`` is SHA-256 over the previous record's hash and
the record's own canonical content, so altering, inserting or deleting any
record breaks the chain from that point on; ``studio audit verify`` finds it.
Deleting the newest records leaves a shorter chain that is intact: only a head
recorded elsewhere earlier (``verify(expect=...)``, ``--expect-head``) reveals it.
Round state is rebuilt by replaying these records.

User administration (accounts added, roles, passwords, locks) goes to a second chain
of the same shape, ``admin_log``: it has several writers (the console in the
controller, ``studio users`` on the shell), so each of its records is appended in the
same transaction as the change it records (:meth:`EventLog.append_with`).

Each chain's appenders take its writers' lock first in their transaction (on PostgreSQL
an advisory lock, on SQLite its write lock) and read the head under it: writers in
several processes take turns instead of racing for the next id.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.errors import AppendUnconfirmed, StoreError
from studio.store.database import (
    SLOW_WRITE,
    Database,
    database_words,
    log_database_error,
    metadata,
)

_LOGGER = logging.getLogger(__name__)

GENESIS = "0" * 64
T = TypeVar("T")

# How often an append_with transaction that found SQLite busy past the driver's timeout,
# or lost the race for the next id to a writer that does not take the chain's lock (an
# older version), is run again before the change is refused.
APPEND_ATTEMPTS = 8


def chain_table(name: str) -> sa.Table:
    """A hash-chained log table; the event log and the admin log have the same shape."""
    return sa.Table(
        name,
        metadata,
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("ts", sa.String(40), nullable=False),
        sa.Column("table_id", sa.String(64), nullable=False, index=True),
        sa.Column("round_id", sa.String(64), nullable=True, index=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )


events = chain_table("event_log")
# User administration; its records' table_id is always ADMIN_SCOPE.
admin_events = chain_table("admin_log")
ADMIN_SCOPE = "users"


def canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)


def chain_hash(
    prev_hash: str,
    record_id: int,
    ts: str,
    table_id: str,
    round_id: str | None,
    kind: str,
    payload: str,
) -> str:
    body = canonical([record_id, ts, table_id, round_id, kind, payload])
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Entry:
    """A record to append (the log assigns id, time if missing, and hashes)."""

    table_id: str
    kind: str
    payload: dict[str, Any]
    round_id: str | None = None
    ts: datetime | None = None


@dataclass(frozen=True, slots=True)
class LogRecord:
    id: int
    ts: str
    table_id: str
    round_id: str | None
    kind: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str


VERIFY_BATCH = 500  # records a chain walk reads (and hashes) between two turns of the loop


@dataclass(frozen=True, slots=True)
class ChainReport:
    ok: bool
    records: int
    first_bad_id: int | None = None
    reason: str = ""
    head: str = GENESIS
    head_id: int = 0

    @property
    def anchor(self) -> str:
        """The head as ``ID:HASH``: what to keep off the machine and pass to ``verify`` later."""
        return f"{self.head_id}:{self.head}"


def _null_ids(rows: int) -> str:
    """What a walk that set ``rows`` rows whose id is NULL aside adds to its fault."""
    if not rows:
        return ""
    return (
        f"; and {rows} row(s) whose id is NULL (not in the chain; read before record 1 in "
        "id order: the record missing where the walk found its gap, or added by hand)"
    )


def _unlinked(record_id: int) -> str:
    """Why a record whose prev_hash is not its predecessor's hash breaks the chain: the
    break is between the two (the predecessor altered with its own hash recomputed, or
    this record's link changed), not in this record alone."""
    if record_id == 1:
        return "prev_hash does not link: record 1's prev_hash is not the chain's start"
    return (
        f"prev_hash does not link: record {record_id - 1} altered (its hash recomputed) or "
        f"record {record_id} relinked: the break is between them"
    )


def parse_head(text: str) -> tuple[int, str]:
    """``ID:HASH`` (as :attr:`ChainReport.anchor` prints it) to ``(id, hash)``."""
    record_id, _, digest = text.strip().lower().partition(":")
    if not record_id.isdigit() or len(digest) != 64 or digest.strip("0123456789abcdef"):
        raise StoreError(f"not a chain head {text!r}: expected ID:HASH (64 hex digits)")
    return int(record_id), digest


def _chain_row(entry: Entry, record_id: int, prev_hash: str) -> dict[str, Any]:
    """The row that appends ``entry`` as record ``record_id`` after ``prev_hash``."""
    stamp = (entry.ts or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="microseconds")
    try:
        body = canonical(entry.payload)
    except (TypeError, ValueError) as exc:
        # Keys of mixed types cannot be sorted; the append's callers handle StoreError (the
        # controller rebuilds its table from the log), not a TypeError from deep in json.
        raise StoreError(f"{entry.kind}: the payload cannot be written as JSON: {exc}") from exc
    return {
        "id": record_id,
        "ts": stamp,
        "table_id": entry.table_id,
        "round_id": entry.round_id,
        "kind": entry.kind,
        "payload": body,
        "prev_hash": prev_hash,
        "hash": chain_hash(
            prev_hash, record_id, stamp, entry.table_id, entry.round_id, entry.kind, body
        ),
    }


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_JSON_KINDS[type(None)] = "null"


def payload_problem(text: str) -> str | None:
    """What is wrong with a stored payload, or None: every record's is a JSON object."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:  # (JSONDecodeError, UnicodeDecodeError)
        shown = text if len(text) <= 40 else text[:40] + "..."
        return f"payload {shown!r} is not JSON ({exc})"
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        return f"payload is a JSON {kind}, not an object"
    return None


def _dict_to_record(row: dict[str, Any]) -> LogRecord:
    # The text this process just wrote from the entry's dict (not read back): always JSON.
    return LogRecord(**{**row, "payload": json.loads(row["payload"])})


def _stored_payload(table: str, row: sa.Row[Any]) -> dict[str, Any]:
    """A stored record's payload, or a :class:`StoreError` that names the record.

    A payload changed by hand (or a damaged file) failed a start with a bare
    JSONDecodeError traceback that named neither the record nor the log (a review). The
    text itself is not shown: an admin log record's may hold a password's hash.
    """
    try:
        value = json.loads(row.payload)
    except (TypeError, ValueError) as exc:  # (JSONDecodeError, UnicodeDecodeError)
        problem = f"its payload is not JSON ({exc})"
    else:
        if isinstance(value, dict):
            return value
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        problem = f"its payload is a JSON {kind}, not an object"
    raise StoreError(
        f"{table}: record {row.id} (kind {row.kind}, table {row.table_id}) cannot be read: "
        f"{problem}; the log is damaged: run `studio audit verify` on this database"
    )


def _row_to_record(table: str, row: sa.Row[Any]) -> LogRecord:
    return LogRecord(
        id=row.id,
        ts=row.ts,
        table_id=row.table_id,
        round_id=row.round_id,
        kind=row.kind,
        payload=_stored_payload(table, row),
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


_TEXT_COLUMNS = ("ts", "table_id", "round_id", "kind", "payload", "prev_hash", "hash")
# SQLite's names of the types a value can have (``typeof``), as a message says them.
_SQLITE_TYPES = {
    "integer": "an integer",
    "real": "a real number",
    "text": "text",
    "blob": "a blob",
    "null": "NULL",
}


@dataclass(frozen=True, slots=True)
class StoredRow:
    """A chain's row as stored: each column as the text it was written as (the payload
    not parsed), and ``damage``: why the row holds what no record can (on SQLite: a value
    that is no UTF-8 text, or not of its column's type), else None. ``id`` is an int
    unless ``damage`` says otherwise."""

    id: Any
    ts: str
    table_id: str
    round_id: str | None
    kind: str
    payload: str
    prev_hash: str
    hash: str
    damage: str | None = None

    @classmethod
    def of(cls, row: sa.Row[Any]) -> StoredRow:
        """A row as the driver read it (PostgreSQL: its columns' own types)."""
        return cls(*(getattr(row, name) for name in ("id", *_TEXT_COLUMNS)))


def _sqlite_columns(table: sa.Table) -> list[sa.ColumnElement[Any]]:
    """Each column of a chain's table as its type and its bytes: SQLite keeps any value in
    any column, and text that is no UTF-8 stops the driver's read of the whole row."""
    columns: list[sa.ColumnElement[Any]] = []
    for name in ("id", *_TEXT_COLUMNS):
        column = table.c[name]
        columns.append(sa.func.typeof(column).label(f"{name}_type"))
        columns.append(sa.cast(column, sa.LargeBinary).label(name))
    return columns


def _sqlite_row(row: sa.Row[Any]) -> StoredRow:
    """A row read with :func:`_sqlite_columns`, its damage (the first column's) named."""
    mapping = row._mapping
    damage: str | None = None
    values: dict[str, Any] = {}
    for name in ("id", *_TEXT_COLUMNS):
        kind, raw = mapping[f"{name}_type"], mapping[name]
        if raw is None:
            values[name] = None
            if name != "round_id":
                damage = damage or f"its {name} is NULL"
            continue
        data = bytes(raw)
        text = data.decode("utf-8", "replace")
        values[name] = text
        wanted = "integer" if name == "id" else "text"
        if kind != wanted:
            shown = text if len(text) <= 40 else text[:40] + "..."
            held = _SQLITE_TYPES.get(kind, kind)
            damage = damage or f"its {name} is {held} ({shown!r}), not {_SQLITE_TYPES[wanted]}"
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            damage = damage or (
                f"its {name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}: damaged, or written by hand)"
            )
        if name == "id" and kind == "integer":
            values[name] = int(text)
    return StoredRow(**values, damage=damage)


def _undamaged(row: sa.Row[Any], bad: dict[int, str]) -> StoredRow | None:
    """A row read with :func:`_sqlite_columns`, or None when it is damaged: put in ``bad``
    (its id, what is wrong) if its id is a number (the chain's walk names the others)."""
    stored = _sqlite_row(row)
    if stored.damage is None:
        return stored
    if isinstance(stored.id, int):
        bad.setdefault(stored.id, stored.damage)
    return None


def _fault(row: StoredRow, expected_id: int, prev: str) -> tuple[int, str] | None:
    """Why ``row``, found where record ``expected_id`` should be, is not that record
    chained after the hash ``prev``, as (the record to name, why); None when it is."""
    if not isinstance(row.id, int):  # (damaged: text, a real number)
        # Named by where the walk found it: text sorts after every number, so a text id
        # is read after the head, wherever its record was (its own gap, if walked, first).
        where = f"after record {expected_id - 1}" if expected_id > 1 else "first"
        return (
            expected_id,
            f"where record {expected_id} should be, {row.damage} (read {where} in id order)",
        )
    if row.id < 1:
        return row.id, f"record {row.id} is before the first record (1): not in the chain"
    if row.id != expected_id:
        return row.id, f"gap: expected id {expected_id}"
    if row.damage is not None:
        return row.id, row.damage
    if row.prev_hash != prev:
        return row.id, _unlinked(row.id)
    digest = chain_hash(prev, row.id, row.ts, row.table_id, row.round_id, row.kind, row.payload)
    if digest != row.hash:
        return row.id, "content does not match its hash"
    return None


@dataclass(frozen=True, slots=True)
class SpanReport:
    """What :meth:`EventLog.verify_span` found: ``first_prev`` is the stored link of the
    span's first record (what the record before it must hash to)."""

    ok: bool
    records: int
    first_prev: str
    first_bad_id: int | None = None
    reason: str = ""
    head_id: int = 0
    head: str = ""
    # The fault is a row whose id is not an integer (where the walk read it, not its place).
    odd_id: bool = False


def _driver_message(exc: Exception) -> str:
    """The database driver's own message, without the statement and its parameters."""
    orig = getattr(exc, "orig", None)
    return f"{type(orig).__name__}: {orig}" if orig is not None else type(exc).__name__


@contextlib.contextmanager
def _slow_write(entries: list[Entry], bound: float) -> Iterator[None]:
    """A WARNING once the write of ``entries`` has waited :data:`SLOW_WRITE` s for the
    database (it goes on waiting, up to ``bound`` s), and another when it ends, saying how
    long it took and how it ended: ``went through`` (committed), or ``failed`` with the
    error's type (not committed, unless the append's next line finds its records in the
    log: a commit whose answer was lost). A database that stopped answering was silent (a
    crash review); until 2026-12-07 the second line said ``ended after N s`` whatever the
    outcome, and a write that failed read as one that went through (an operations drill)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    what = f"{entries[0].kind} on {entries[0].table_id}"

    def warn() -> None:
        _LOGGER.warning(
            "event log append (%s): no answer from the database after %g s; waiting up to %g s",
            what,
            SLOW_WRITE,
            bound,
        )

    late = loop.call_later(SLOW_WRITE, warn)
    outcome = "went through"
    try:
        yield
    except _LostRace:
        outcome = "lost its place to another writer (tried again at the head)"
        raise
    except BaseException as exc:
        outcome = f"failed ({type(exc).__name__})"
        raise
    finally:
        late.cancel()
        took = loop.time() - started
        if took >= SLOW_WRITE:
            _LOGGER.warning("event log append (%s): %s after %.1f s", what, outcome, took)


class _LostRace(Exception):
    """Another writer appended the id this transaction wanted; run it again."""


# Work an append does in its own transaction, given the records appended.
AppendHook = Callable[[AsyncConnection, list[LogRecord]], Awaitable[object]]


class EventLog:
    """Append-only hash chain; many readers, and writers in any number of processes.

    ``table`` is :data:`events` (the game's log) or :data:`admin_events`. Every append
    holds the chain's writers' lock (:meth:`Database.lock_writers`, one per table) for
    its transaction, so writers take turns: none loses the race for the next id to
    another that appends while it reads the head.
    """

    def __init__(
        self,
        db: Database,
        table: sa.Table = events,
        *,
        bad_payloads: dict[int, str] | None = None,
    ) -> None:
        self.db = db
        self.table = table
        # For the audit: a record whose payload is not a JSON object is put here (its id,
        # what is wrong) and left out of what is read, instead of failing the read.
        self.bad_payloads = bad_payloads
        # For the audit's progress lines: told the last id of each batch read.
        self.progress: Callable[[int], None] | None = None
        # This instance's appends go in the order they were asked for.
        self._lock = asyncio.Lock()
        self._head: tuple[int, str] | None = None

    async def _head_in(self, conn: AsyncConnection) -> tuple[int, str]:
        query = sa.select(self.table.c.id, self.table.c.hash).order_by(self.table.c.id.desc())
        row = (await conn.execute(query.limit(1))).first()
        return (row.id, row.hash) if row else (0, GENESIS)

    async def _lock_chain(self, conn: AsyncConnection) -> None:
        await self.db.lock_writers(conn, self.table.name)

    async def append_with(
        self, work: Callable[[AsyncConnection], Awaitable[T]], entry: Callable[[T], Entry]
    ) -> T:
        """Run ``work`` and append ``entry(result)`` in ONE transaction: both happen, or neither.

        The transaction takes the chain's lock first, so writers in other processes (the
        console, ``studio users``) wait for each other instead of racing for the next id.
        One that still lost it (a writer without the lock: an older version) or found
        SQLite's write lock held past the driver's timeout is rolled back and run again,
        up to :data:`APPEND_ATTEMPTS` times. ``work``'s own errors end it. A database
        error is a :class:`StoreError` that names the driver's message only: SQLAlchemy's
        text carries the statement's parameters, which for a password change are the new
        password's hash.

        Each try is bounded as an event log append is (``Database.write_timeout``): a
        database that stopped answering held an admin's change (a console form, ``studio
        users``), and its connection, until TCP gave up. Past it during the COMMIT, the
        change may have been made: the error says that it is not known.

        A COMMIT that failed otherwise (its connection reset: its answer lost, the COMMIT
        perhaps on its way) is settled by reading the record back under the chain's lock,
        as an event log append's (:meth:`_landed`): in the log, the change was made and
        this returns; not in it, it was not; the log unreadable, it is not known. Said
        "not made" when it was, the admin's retry made it twice (a review).
        """
        for attempt in range(APPEND_ATTEMPTS):
            bound = asyncio.timeout(self.db.write_timeout)
            committing = False
            rows: list[dict[str, Any]] = []
            try:
                async with bound:
                    async with self.db.engine.begin() as conn:
                        try:
                            await self._lock_chain(conn)
                            result = await work(conn)
                        except sa.exc.OperationalError as exc:
                            raise _LostRace(str(exc)) from exc
                        rows = await self._insert_at_head(conn, [entry(result)])
                        committing = True  # (the block's end commits)
                return result
            except _LostRace as exc:
                if attempt == APPEND_ATTEMPTS - 1:
                    cause = exc.__cause__
                    why = _driver_message(cause) if isinstance(cause, Exception) else str(exc)
                    raise StoreError(f"{self.table.name}: the change was not made: {why}") from None
                await asyncio.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
            except (OSError, sa.exc.SQLAlchemyError) as exc:  # (TimeoutError is an OSError)
                if not bound.expired():
                    why = _driver_message(exc)
                    if committing and await self._change_landed(rows, why):
                        return result
                    raise StoreError(f"{self.table.name}: the change was not made: {why}") from None
                name, seconds = self.table.name, self.db.write_timeout
                _LOGGER.warning(
                    "%s: a change got no answer from the database in %g s%s",
                    name,
                    seconds,
                    " to its commit" if committing else "; not made",
                )
                if committing:
                    raise StoreError(
                        f"{name}: the database gave no answer in {seconds:g} s to the change's "
                        f"commit: whether it was made is not known (the {name.replace('_', ' ')}"
                        " says, once the database answers)"
                    ) from None
                raise StoreError(
                    f"{name}: the change was not made: the database gave no answer in {seconds:g} s"
                ) from None
        raise AssertionError("unreachable")

    async def _change_landed(self, rows: list[dict[str, Any]], why: str) -> bool:
        """Whether an admin change whose COMMIT failed with ``why`` committed all the same:
        its record is in the log, with its hash. A :class:`StoreError` saying that it is not
        known when the log cannot tell."""
        name = self.table.name
        try:
            landed = bool(await self._held(rows[0]["id"], rows[-1]["id"], rows[-1]["hash"]))
        except StoreError:
            _LOGGER.warning("%s: a change's commit failed (%s); the log could not tell", name, why)
            raise StoreError(
                f"{name}: the change's commit failed ({why}): whether it was made is not "
                f"known (the {name.replace('_', ' ')} says, once the database answers)"
            ) from None
        _LOGGER.warning(
            "%s: a change's commit failed (%s); its record is %s the log",
            name,
            why,
            "in" if landed else "not in",
        )
        return landed

    async def _insert_at_head(
        self, conn: AsyncConnection, entries: list[Entry], head: tuple[int, str] | None = None
    ) -> list[dict[str, Any]]:
        """Append ``entries`` after ``head``, or after the head this transaction reads.

        The chain's lock is held, so the head read stays the head until the commit.
        """
        try:
            last_id, last_hash = head or await self._head_in(conn)
            rows: list[dict[str, Any]] = []
            for entry in entries:
                row = _chain_row(entry, last_id + 1, last_hash)
                rows.append(row)
                last_id, last_hash = row["id"], row["hash"]
            await conn.execute(self.table.insert(), rows)
        except (sa.exc.IntegrityError, sa.exc.OperationalError) as exc:
            raise _LostRace(str(exc)) from exc
        # A writer of this process that caches the head must read it again.
        self._head = None
        return rows

    async def append(
        self,
        table_id: str,
        kind: str,
        payload: dict[str, Any],
        *,
        round_id: str | None = None,
        ts: datetime | None = None,
    ) -> LogRecord:
        return (await self.append_batch([Entry(table_id, kind, payload, round_id, ts)]))[0]

    async def append_batch(
        self,
        entries: list[Entry],
        *,
        also: AppendHook | None = None,
    ) -> list[LogRecord]:
        """Append several records in ONE transaction: all of them are durable, or none.
        ``also`` runs in that transaction once they are in (an index of them that must
        never disagree with the log: it commits with them, or neither does).

        Shielded from cancellation: a caller cancelled mid-write (a shutdown) must not
        leave the transaction committed but the cached chain head behind it.
        """
        return await asyncio.shield(self._append_batch(entries, also))

    async def _append_batch(
        self,
        entries: list[Entry],
        also: AppendHook | None,
    ) -> list[LogRecord]:
        if not entries:
            return []
        async with self._lock:
            # The head this instance wrote last saves reading it per append (the controller
            # is the one writer of its log); when another writer appended since, the id is
            # taken and the append runs again, at the head read under the chain's lock.
            cached, self._head = self._head, None
            for head in (cached, None) if cached else (None,):
                rows: list[dict[str, Any]] = []
                bound = asyncio.timeout(self.db.write_timeout)
                try:
                    # Bounded (Database.write_timeout): a database that stopped answering
                    # held it until TCP gave up (a crash review). A TimeoutError is an
                    # OSError: a commit sent is then looked for in the log (_landed).
                    with _slow_write(entries, self.db.write_timeout):
                        async with bound:
                            async with self.db.engine.begin() as conn:
                                await self._lock_chain(conn)
                                rows = await self._insert_at_head(conn, entries, head)
                                if also is not None:
                                    await also(conn, [_dict_to_record(row) for row in rows])
                    break
                except _LostRace as exc:
                    if head is None:
                        cause = exc.__cause__ if exc.__cause__ is not None else exc
                        log_database_error("event log append failed", cause)
                        raise StoreError(
                            f"event log append failed: {database_words(cause)}"
                        ) from exc.__cause__
                except (OSError, sa.exc.SQLAlchemyError) as exc:
                    # The connection may have dropped as the commit went out: the records
                    # may be in the log all the same. Taken as failed, the controller's
                    # caller would send the input again and it would be logged twice.
                    why = self._why(exc, bound)
                    if rows and await self._landed(rows, exc, why):
                        _LOGGER.warning(
                            "event log append: the commit's answer was lost (%s), but "
                            "records %d-%d are in the log",
                            why,
                            rows[0]["id"],
                            rows[-1]["id"],
                        )
                        break
                    # The driver's own connection errors too (PostgreSQL refusing them): a
                    # StoreError has the controller rebuild the table (a review: the input
                    # stayed applied in memory only, and the error ended the controller).
                    raise StoreError(f"event log append failed: {why}") from exc
            self._head = (rows[-1]["id"], rows[-1]["hash"])
        return [_dict_to_record(row) for row in rows]

    def _why(self, exc: BaseException, bound: asyncio.Timeout) -> str:
        """The database's error in words fit for a client (:func:`database_words`, the whole
        error logged); the write timeout's (``bound`` expired) says so."""
        if bound.expired():
            return f"the database gave no answer in {self.db.write_timeout:g} s"
        log_database_error("event log write failed", exc)
        return database_words(exc)

    async def _landed(self, rows: list[dict[str, Any]], failure: BaseException, why: str) -> bool:
        """Whether an append that failed committed all the same: its last record is in
        the log, with its hash. :class:`AppendUnconfirmed` when the log cannot tell."""
        try:
            return bool(await self._held(rows[0]["id"], rows[-1]["id"], rows[-1]["hash"]))
        except StoreError as exc:
            raise AppendUnconfirmed(
                f"event log append failed: {why}; whether it committed is not known ({exc})",
                rows[0]["id"],
                rows[-1]["id"],
                rows[-1]["hash"],
            ) from failure

    async def holds(self, first_id: int, last_id: int, last_hash: str) -> list[LogRecord]:
        """Records ``first_id`` .. ``last_id`` if the last of them has ``last_hash`` (an
        append :class:`AppendUnconfirmed` committed), else none."""
        return await self._held(first_id, last_id, last_hash)

    async def _held(self, first_id: int, last_id: int, last_hash: str) -> list[LogRecord]:
        # Read under the chain's lock: a transaction whose answer was lost may still hold
        # it, its COMMIT on its way (PostgreSQL keeps the lock until the COMMIT or the lost
        # connection ends it); read before, the records would not be there yet and be
        # taken as never written (a review, with a proxy that delayed the COMMIT 20 ms).
        query = (
            sa.select(self.table)
            .where(self.table.c.id.between(first_id, last_id))
            .order_by(self.table.c.id)
        )
        bound = asyncio.timeout(self.db.write_timeout)
        try:
            # Bounded as an append is: the database may still not answer.
            async with bound:
                async with self.db.engine.begin() as conn:
                    await self._lock_chain(conn)
                    rows = (await conn.execute(query)).all()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"event log read failed: {self._why(exc, bound)}") from exc
        records = [_row_to_record(self.table.name, row) for row in rows]
        if not records or records[-1].id != last_id or records[-1].hash != last_hash:
            return []
        return records

    async def read(
        self,
        *,
        table_id: str | None = None,
        round_id: str | None = None,
        kinds: list[str] | None = None,
        after_id: int = 0,
        limit: int | None = None,
        descending: bool = False,
        ids: list[int] | None = None,
    ) -> list[LogRecord]:
        columns = self.table.c
        order = columns.id.desc() if descending else columns.id
        # The audit's reads (bad_payloads) take SQLite's rows as stored: one of them with
        # text that is no UTF-8 failed the whole read (the check of the round index ended
        # the audit before its report).
        stored = self.bad_payloads is not None and self.db.is_sqlite
        selected = _sqlite_columns(self.table) if stored else [self.table]
        query = sa.select(*selected).where(columns.id > after_id).order_by(order)
        if ids is not None:
            query = query.where(columns.id.in_(ids))
        if table_id is not None:
            query = query.where(columns.table_id == table_id)
        if round_id is not None:
            query = query.where(columns.round_id == round_id)
        if kinds:
            query = query.where(columns.kind.in_(kinds))
        if limit is not None:
            query = query.limit(limit)
        try:
            async with self.db.reading() as conn:
                rows = (await conn.execute(query)).all()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            # A StudioError, as an append's: a table rebuilt with the database away failed
            # with the driver's own error, which ended the MQTT consumer that asked for it.
            log_database_error("event log read failed", exc)
            raise StoreError(f"event log read failed: {database_words(exc)}") from exc
        if self.progress is not None and rows:
            last = _sqlite_row(rows[-1]).id if stored else rows[-1].id
            if isinstance(last, int):
                self.progress(last)
        if self.bad_payloads is None:
            return [_row_to_record(self.table.name, row) for row in rows]
        records = []
        for row in rows:
            readable: Any = _undamaged(row, self.bad_payloads) if stored else row
            if readable is None:
                continue
            problem = payload_problem(readable.payload)
            if problem is None:
                records.append(_row_to_record(self.table.name, readable))
            else:
                self.bad_payloads.setdefault(readable.id, problem)
        return records

    async def iterate(
        self, batch: int = 5000, *, after: int = 0, **filters: Any
    ) -> AsyncIterator[LogRecord]:
        """The records after id ``after`` that ``filters`` (those of :meth:`read`) match, in
        id order, read ``batch`` at a time."""
        while True:
            chunk = await self.read(after_id=after, limit=batch, **filters)
            if not chunk:
                return
            for record in chunk:
                yield record
            after = chunk[-1].id

    async def _raw_rows(
        self, batch: int = 5000, after: int | None = None, *, until: int | None = None
    ) -> AsyncIterator[StoredRow]:
        """Every row as stored (the payload as its text), in id order, ids below 1 too
        (only those after ``after``, if given, and up to ``until``).

        On SQLite each column is read as its bytes and its type (:func:`_sqlite_row`): a
        value that is not what the column was written with (text that is no UTF-8, text
        where the id is) is a row's :attr:`StoredRow.damage`, not the driver's error or a
        TypeError that ended ``studio audit verify`` in a traceback."""
        sqlite = self.db.is_sqlite
        columns = _sqlite_columns(self.table) if sqlite else [self.table]
        while True:
            query = sa.select(*columns).order_by(self.table.c.id).limit(batch)
            if after is not None:
                query = query.where(self.table.c.id > after)
            if until is not None:
                query = query.where(self.table.c.id <= until)
            async with self.db.reading() as conn:
                rows = (await conn.execute(query)).all()
            if not rows:
                return
            stored = [_sqlite_row(row) if sqlite else StoredRow.of(row) for row in rows]
            for row in stored:
                yield row
            last = stored[-1].id
            if not isinstance(last, int):  # (text sorts after every number: no more ids)
                return
            after = last
            if self.progress is not None:
                self.progress(after)

    async def verify_span(
        self, first_id: int, last_id: int | None = None, *, prev: str | None = None
    ) -> SpanReport:
        """Walk records ``first_id`` .. ``last_id`` (or the head): each must be there, in
        turn, hold what its hash says, and link to the one before it. Record ``first_id``
        must link to ``prev``, if given (record 1, to the chain's start); else its link is
        taken as it is stored (what it links to is not read). A controller's start walks
        what it replays and re-indexes (:class:`StartChain`)."""
        prev = GENESIS if first_id == 1 else prev
        first_prev: str | None = prev
        expected_id, count = first_id, 0
        async for row in self._raw_rows(VERIFY_BATCH, after=first_id - 1, until=last_id):
            if prev is None:
                prev = first_prev = row.prev_hash if row.damage is None else ""
            fault = _fault(row, expected_id, prev)
            if fault is not None:
                odd = not isinstance(row.id, int)
                return SpanReport(False, count, first_prev or "", fault[0], fault[1], odd_id=odd)
            prev = row.hash
            expected_id += 1
            count += 1
        if last_id is not None and expected_id <= last_id:
            return SpanReport(False, count, first_prev or "", expected_id, "missing (deleted?)")
        return SpanReport(True, count, first_prev or "", head_id=expected_id - 1, head=prev or "")

    async def verify(
        self, expect: tuple[int, str] | None = None, *, resume: tuple[int, str] | None = None
    ) -> ChainReport:
        """Walk the whole chain; report the first record whose hash or link is wrong.

        Each record's hash is checked over its payload exactly as stored: the text that was
        hashed when it was appended. Parsed and dumped again it can differ from it while
        saying the same (integer keys sort as numbers when written, as strings when read),
        and a payload that is no longer JSON must be reported where it is, not stop the walk.

        ``expect`` is a head ``(id, hash)`` recorded earlier: the chain must still hold that
        record with that hash, which an intact but truncated (or rewritten) tail does not.

        ``resume`` is the head ``(id, hash)`` of an earlier walk that found the chain sound:
        the log must still hold that record with that hash, and only what follows it is
        walked, once the number of records up to it is still its id. It does not see a record
        before that head changed (its hash rewritten or not) or swapped for another (a full
        walk does).
        """
        prev = GENESIS
        expected_id = 1
        count = 0
        walk_after: int | None = None  # (the whole log, ids below 1 too)
        if resume is not None and resume[0] > 0:
            head_id, head = resume
            async with self.db.reading() as conn:
                query = sa.select(self.table.c.hash).where(self.table.c.id == head_id)
                stored = (await conn.execute(query)).scalar_one_or_none()
            if stored is None:
                reason = (
                    f"record {head_id}, the head an earlier check found sound, is gone: "
                    "records were deleted from the log's end"
                )
                return ChainReport(False, 0, head_id, reason, GENESIS)
            if stored != head:
                reason = (
                    f"record {head_id} differs from the head an earlier check found sound: "
                    "the log was cut there and written again"
                )
                return ChainReport(False, 0, head_id, reason, GENESIS)
            async with self.db.reading() as conn:
                query = sa.select(sa.func.count()).where(self.table.c.id <= head_id)
                held = int((await conn.execute(query)).scalar_one())
            if held != head_id:
                # Cheap beside a walk: a record deleted before the head, or one added below
                # id 1, since the sound check (the next full walk says where).
                reason = (
                    f"the log holds {held} records up to record {head_id}, the head an "
                    f"earlier check found sound (it held {head_id}): records were deleted "
                    "or added before it"
                )
                return ChainReport(False, 0, head_id, reason, GENESIS)
            prev, expected_id, count = head, head_id + 1, head_id
            walk_after = head_id
        # Small batches: the walk shares the event loop with the controller (the console's
        # audit page), and hashing 5,000 records held it up to 77 ms at a time; 500, 8 ms
        # (56,622 records: 0.81 s and 0.84 s in all).
        nulls = 0  # rows whose id is NULL (SQLite reads them first): named with the fault
        async for record in self._raw_rows(VERIFY_BATCH, after=walk_after):
            if record.id is None and count == 0:
                nulls += 1
                continue
            fault = _fault(record, expected_id, prev)
            if fault is not None:
                return ChainReport(False, count, fault[0], fault[1] + _null_ids(nulls), prev)
            digest = record.hash
            if expect is not None and record.id == expect[0] and digest != expect[1]:
                reason = (
                    f"record {record.id} differs from the expected head {expect[0]}:{expect[1]}: "
                    "it no longer has that hash, so the log up to it was written again (cut "
                    "there or earlier, the records after the cut rehashed), or this is another "
                    "log; the records before it link to each other, and which one changed "
                    "first cannot be told without a copy of the log as it was"
                )
                return ChainReport(False, count, record.id, reason, prev, count)
            prev = record.hash
            expected_id += 1
            count += 1
        if nulls:
            reason = f"the log ends at record {count}{_null_ids(nulls)}"
            return ChainReport(False, count, count + 1, reason, prev, count)
        if expect is not None and count < expect[0]:
            reason = (
                f"the log ends at record {count}, before the expected head {expect[0]}: "
                "records were deleted from its end"
            )
            return ChainReport(False, count, count + 1, reason, prev, count)
        return ChainReport(True, count, head=prev, head_id=count)


class ChainBroken(StoreError):
    """A record a controller's start was to replay or index does not chain: the start is
    refused (``studio controller run`` exits with status 2), ``record_id`` named."""

    def __init__(self, table: str, record_id: int, why: str, *, running: bool = False) -> None:
        done = (
            "nothing replayed from it was sealed as a checkpoint or installed, and the "
            "controller stops"
            if running
            else "it is not replayed, and nothing was started"
        )
        super().__init__(
            f"{table}: record {record_id} does not chain: {why}. The log was changed after "
            f"it was written, or is damaged: {done}. Run `studio audit verify` on this "
            "database (docs/operations.md)"
        )
        self.record_id = record_id


class StartChain:
    """The span of a chain that a controller's start checked, from the lowest record it
    read to the head: each record it replays, indexes or publishes again is first covered
    (:meth:`cover`), the span walked further down or up as needed, so each record is walked
    once (a start from a checkpoint walks from the checkpoint's ``through`` on, not the
    whole log). A record that does not chain is :class:`ChainBroken`."""

    def __init__(self, log: EventLog, *, running: bool = False) -> None:
        self.log = log
        # While the controller runs (a checkpoint's or a rebuild's replay), not at a start.
        self.running = running
        # (first id, its stored prev_hash, last id, its hash) of the span walked, if any.
        self._span: tuple[int, str, int, str] | None = None
        self._lock = asyncio.Lock()
        self.walked = 0  # records walked, some twice (the cost: tests)
        # The records :meth:`cover_one` checked: some the span holds too, or comes to.
        self._ones: set[int] = set()

    @property
    def first(self) -> int | None:
        """The lowest record walked (None: none yet): where the start's walk began."""
        return self._span[0] if self._span is not None else None

    @property
    def last(self) -> int | None:
        """The highest record walked (None: none yet); every record up to it was committed
        when it was walked, so a read begun after that sees all of them."""
        return self._span[2] if self._span is not None else None

    @property
    def checked(self) -> int:
        """How many records were checked, each once: the span from :attr:`first` to
        :attr:`last` and those :meth:`cover_one` checked outside it. A start from the first
        record says the number `studio audit verify` says of the log; until 2026-12-07 the
        start's log line gave :attr:`walked`, two more for each table whose first logged
        settings were checked before the span was walked over them (an operator's review:
        103 records of a log of 101)."""
        if self._span is None:
            return len(self._ones)
        first, _, last, _ = self._span
        return last - first + 1 + sum(1 for i in self._ones if not first <= i <= last)

    async def cover(self, ids: list[int]) -> None:
        """Make sure records ``min(ids)`` .. the head chain (nothing for no ids)."""
        if not ids:
            return
        held: list[object] = list(ids)  # (as read: SQLite may give text for an id)
        numbers = [i for i in held if isinstance(i, int)]
        if len(numbers) < len(held):
            # A read returned a row whose id is not an integer (SQLite keeps text or a real
            # number there; text sorts after every number, read after the head wherever
            # its record was): damage, named by a walk of the whole log, which meets the
            # gap it left (or, the last record's, the row itself) first.
            await self._damaged([i for i in held if i not in numbers])
            return
        low, high = max(1, min(numbers)), max(numbers)
        async with self._lock:
            if self._span is None:
                report = await self._walk(low)
                await self._check(report)
                self._span = (low, report.first_prev, report.head_id, report.head)
                return
            first, first_prev, last, head = self._span
            if low < first:
                below = await self._walk(low, first - 1)
                await self._check(below)
                if below.head != first_prev:
                    raise ChainBroken(
                        self.log.table.name, first, _unlinked(first), running=self.running
                    )
                first, first_prev = low, below.first_prev
            if high > last:
                above = await self._walk(last + 1, prev=head)
                await self._check(above)
                if above.records:
                    last, head = above.head_id, above.head
            self._span = (first, first_prev, last, head)

    async def cover_one(self, record_id: int) -> None:
        """Make sure record ``record_id`` holds what its hash says and the next record links
        to it (two records walked, not the span to the head: one record a start reads far
        before the rest, its first start's logged settings). Nothing if already covered."""
        async with self._lock:
            if self._span is not None and self._span[0] <= record_id <= self._span[2]:
                return
            report = await self._walk(record_id, record_id + 1)
            if (
                not report.ok
                and report.records == 1
                and report.first_bad_id == record_id + 1
                and not await self.log.read(after_id=record_id, limit=1)
            ):
                self._ones.add(record_id)
                return  # (the head: nothing after it to link to it)
            await self._check(report)
            self._ones.update(range(record_id, record_id + report.records))

    async def _damaged(self, odd: list[object]) -> None:
        async with self._lock:
            await self._check(await self._walk(1))
        # (The walk always meets such a row: not reached but for a log changed meanwhile.)
        shown = ", ".join(repr(i)[:40] for i in odd)
        raise ChainBroken(
            self.log.table.name,
            1,
            f"a record read has an id that is not an integer ({shown})",
            running=self.running,
        )

    async def _walk(
        self, first_id: int, last_id: int | None = None, *, prev: str | None = None
    ) -> SpanReport:
        """:meth:`EventLog.verify_span`, the database's failure a :class:`StoreError` (as a
        read's: a table rebuilt while the database is away is tried again later)."""
        try:
            return await self.log.verify_span(first_id, last_id, prev=prev)
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            log_database_error("event log read failed", exc)
            raise StoreError(f"event log read failed: {database_words(exc)}") from exc

    async def _check(self, report: SpanReport) -> None:
        self.walked += report.records
        if not report.ok and report.odd_id and report.first_bad_id != 1:
            # A text id is read after the head, wherever its record was: the whole log's
            # walk meets the gap it left first (or the row itself, were it the last record).
            report = await self._walk(1)
            self.walked += report.records
        if not report.ok:
            assert report.first_bad_id is not None
            raise ChainBroken(
                self.log.table.name, report.first_bad_id, report.reason, running=self.running
            )
