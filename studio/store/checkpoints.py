"""Each table's last checkpoint (studio/controller/checkpoint.py): the bytes, and the log
record that vouches for them.

Not chained itself: the record it names is, and holds the checkpoint's SHA-256, so a
checkpoint altered here is not read back (a start replays the whole log instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from studio.errors import StoreError, StudioError
from studio.store.database import Database, database_words, log_database_error, metadata
from studio.store.eventlog import EventLog

checkpoints = sa.Table(
    "checkpoints",
    metadata,
    sa.Column("table_id", sa.String(64), primary_key=True),
    sa.Column("record_id", sa.BigInteger, nullable=False),
    sa.Column("state", sa.LargeBinary, nullable=False),
)


@dataclass(frozen=True)
class StoredCheckpoint:
    record_id: int  # the chained log record that holds its digest
    state: bytes


# A row's columns as bytes and a number, whatever was written there: SQLite keeps any value
# in any column, and a checkpoint whose bytes were made text that is no UTF-8 (a damaged
# row: ``substr(state, ...) || X'00'``) stopped the driver's read of the row, so the
# controller's start ("checkpoint of clubhouse not read: Could not decode to UTF-8") and
# the audit (a traceback). Read as its bytes, it is a checkpoint its seal does not match:
# refused, the whole log replayed. (PostgreSQL: the columns' own types, nothing changes.)
_READ = (
    checkpoints.c.table_id,
    checkpoints.c.record_id,
    sa.cast(checkpoints.c.state, sa.LargeBinary).label("state"),
)


class UnreadableCheckpoint(StudioError, ValueError):
    """A checkpoint row holds what no checkpoint can (its record id no number): it is no
    checkpoint, as one altered is not (not a :class:`StoreError`: the database answered)."""


def _stored(row: sa.Row[Any]) -> StoredCheckpoint:
    record_id, state = row.record_id, row.state
    if isinstance(record_id, bool) or not isinstance(record_id, int) or state is None:
        raise UnreadableCheckpoint(
            f"checkpoint of {row.table_id}: its row names no record ({record_id!r})"
        )
    return StoredCheckpoint(record_id, bytes(state))


@dataclass
class Checkpoints:
    db: Database

    async def load(self, table_id: str) -> StoredCheckpoint | None:
        """The table's checkpoint, None if it has none. :class:`StoreError`: the database
        could not be read (the log cannot be either); :class:`UnreadableCheckpoint`: the row
        holds no checkpoint (the start refuses it and replays the whole log)."""
        query = sa.select(*_READ).where(checkpoints.c.table_id == table_id)
        try:
            async with self.db.engine.connect() as conn:
                row = (await conn.execute(query)).first()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            log_database_error(f"checkpoint of {table_id} not read", exc)
            raise StoreError(f"checkpoint of {table_id} not read: {database_words(exc)}") from exc
        return _stored(row) if row else None

    async def save(self, table_id: str, record_id: int, state: bytes) -> None:
        """Replace the table's checkpoint (its record is logged first: a crash between the
        two leaves the previous checkpoint, which is as good a place to replay from)."""
        async with self.db.engine.begin() as conn:
            where = checkpoints.c.table_id == table_id
            values = {"record_id": record_id, "state": state}
            done = await conn.execute(checkpoints.update().where(where).values(**values))
            if not done.rowcount:
                await conn.execute(checkpoints.insert().values(table_id=table_id, **values))


@dataclass
class CheckpointReport:
    """Each table's checkpoint against the log record that vouches for it (as a controller's
    start checks it: studio/controller/service.py's ``_checkpoint_of``)."""

    checkpoints: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (table, what)
    # Sealed with a checkpoint key (HMAC) that this check was not given: not checked.
    unchecked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_checkpoints(db: Database, log: EventLog, key: bytes | None) -> CheckpointReport:
    """Each row of ``checkpoints``: the record it names must be that table's checkpoint
    record in the event log, and the row's bytes must match the seal that record holds,
    under ``key`` (the configured ``checkpoint_key``) for a seal made with one. Until
    2026-12-05 ``studio audit verify`` did not look at them: a forged row passed (a start
    refuses it and replays the whole log, but the audit said nothing)."""
    from studio.controller.checkpoint import CHECKPOINT_KIND, seal, sealed

    report = CheckpointReport()
    async with db.engine.connect() as conn:
        rows = (await conn.execute(sa.select(*_READ).order_by(checkpoints.c.table_id))).all()
    for row in rows:
        report.checkpoints += 1
        table_id = str(row.table_id)
        try:
            stored = _stored(row)
        except UnreadableCheckpoint as exc:
            report.problems.append((table_id, str(exc).partition(": ")[2]))
            continue
        record_id = stored.record_id
        found = await log.read(ids=[record_id])
        record = found[0] if found else None
        if record is None or (record.kind, record.table_id) != (CHECKPOINT_KIND, table_id):
            report.problems.append(
                (table_id, f"names record {record_id}, which is not its checkpoint record")
            )
            continue
        digest, through = record.payload.get("digest"), record.payload.get("through")
        made_for = record.payload.get("fingerprint")
        if not isinstance(through, int) or not isinstance(made_for, str):
            report.problems.append((table_id, f"its record {record_id} names no record"))
            continue
        if isinstance(digest, str) and digest.startswith("hmac:") and key is None:
            report.unchecked.append(table_id)
            continue
        expected = seal(stored.state, key, table=table_id, through=through, made_for=made_for)
        if not sealed(digest, expected):
            report.problems.append(
                (
                    table_id,
                    f"does not match its record {record_id} (altered, or sealed with another "
                    "checkpoint key or none)",
                )
            )
    return report
