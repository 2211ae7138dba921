"""Where each table's published outputs stand: the last event-log record whose outputs the
broker acknowledged.

Outputs are published once they and their input are committed, through the bus's outbox,
which sends one message at a time; a controller killed with outputs still queued (the
broker away, or slow) lost them from MQTT for good. A start publishes again what the log
holds after the mark. Not chained: a bookmark kept beside the record of play, not part of
it (a mark lost or behind only repeats outputs, which consumers drop by seq).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from studio.errors import StoreError
from studio.store.database import Database, metadata

stream_marks = sa.Table(
    "stream_marks",
    metadata,
    sa.Column("table_id", sa.String(64), primary_key=True),
    sa.Column("record_id", sa.BigInteger, nullable=False),
)


@dataclass
class StreamMarks:
    db: Database

    async def load(self) -> dict[str, int]:
        try:
            async with self.db.engine.connect() as conn:
                rows = (await conn.execute(sa.select(stream_marks))).all()
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"stream_marks: cannot be read: {exc}") from exc
        return {row.table_id: int(row.record_id) for row in rows}

    async def save(self, marks: dict[str, int]) -> None:
        # A StoreError, which the controller's marks task retries at its next tick: the
        # driver's own error (a connection closed under it, the database briefly away)
        # ended the task, and with it the controller (a review: exit status 1).
        try:
            async with self.db.engine.begin() as conn:
                for table_id, record_id in marks.items():
                    where = stream_marks.c.table_id == table_id
                    done = await conn.execute(
                        stream_marks.update().where(where).values(record_id=record_id)
                    )
                    if not done.rowcount:
                        await conn.execute(
                            stream_marks.insert().values(table_id=table_id, record_id=record_id)
                        )
        except (OSError, sa.exc.SQLAlchemyError) as exc:
            raise StoreError(f"stream_marks: the marks were not saved: {exc}") from exc
