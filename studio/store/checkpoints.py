"""Each table's last checkpoint (studio/controller/checkpoint.py): the bytes, and the log
record that vouches for them.

Not chained itself: the record it names is, and holds the checkpoint's SHA-256, so a
checkpoint altered here is not read back (a start replays the whole log instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from studio.errors import StoreError
from studio.store.database import Database, metadata, reason

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


@dataclass
class Checkpoints:
    db: Database

    async def load(self, table_id: str) -> StoredCheckpoint | None:
        query = sa.select(checkpoints).where(checkpoints.c.table_id == table_id)
        try:
            async with self.db.engine.connect() as conn:
                row = (await conn.execute(query)).first()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"checkpoint of {table_id} not read: {reason(exc)}") from exc
        return StoredCheckpoint(int(row.record_id), bytes(row.state)) if row else None

    async def save(self, table_id: str, record_id: int, state: bytes) -> None:
        """Replace the table's checkpoint (its record is logged first: a crash between the
        two leaves the previous checkpoint, which is as good a place to replay from)."""
        async with self.db.engine.begin() as conn:
            where = checkpoints.c.table_id == table_id
            values = {"record_id": record_id, "state": state}
            done = await conn.execute(checkpoints.update().where(where).values(**values))
            if not done.rowcount:
                await conn.execute(checkpoints.insert().values(table_id=table_id, **values))
