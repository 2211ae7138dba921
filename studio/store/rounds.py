"""Round summaries: one row per round, for history search without scanning the log.

The event log stays the source of truth; this index is rebuilt from it if lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from studio.store.database import Database, metadata

rounds = sa.Table(
    "round_summary",
    metadata,
    sa.Column("round_id", sa.String(80), primary_key=True),
    sa.Column("table_id", sa.String(64), nullable=False, index=True),
    sa.Column("started", sa.String(40), nullable=False, index=True),
    sa.Column("ended", sa.String(40), nullable=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("players", sa.Text, nullable=False, default="[]"),
    sa.Column("alerts", sa.Text, nullable=False, default="[]"),
    sa.Column("total_stake", sa.String(24), nullable=False, default="0.00"),
    sa.Column("total_payout", sa.String(24), nullable=False, default="0.00"),
    sa.Column("single_source", sa.Boolean, nullable=False, default=False),
)


@dataclass
class RoundIndex:
    db: Database

    async def upsert(self, round_id: str, table_id: str, **fields: Any) -> None:
        values = {k: json.dumps(v) if k in ("players", "alerts") else v for k, v in fields.items()}
        async with self.db.engine.begin() as conn:
            exists = (
                await conn.execute(
                    sa.select(rounds.c.round_id).where(rounds.c.round_id == round_id)
                )
            ).first()
            if exists:
                if values:
                    await conn.execute(
                        rounds.update().where(rounds.c.round_id == round_id).values(**values)
                    )
            else:
                # A round first seen late (its opening was not indexed) still gets a row.
                first = (
                    values.get("started") or values.get("ended") or datetime.now(UTC).isoformat()
                )
                await conn.execute(
                    rounds.insert().values(
                        round_id=round_id,
                        table_id=table_id,
                        **{
                            "status": "in_progress",
                            "players": "[]",
                            "alerts": "[]",
                            **values,
                            "started": first,
                        },
                    )
                )

    async def get(self, round_id: str) -> dict[str, Any] | None:
        async with self.db.engine.connect() as conn:
            row = (
                await conn.execute(sa.select(rounds).where(rounds.c.round_id == round_id))
            ).first()
        return _row(row) if row else None

    async def search(
        self,
        *,
        table: str | None = None,
        since: str | None = None,
        until: str | None = None,
        player: str | None = None,
        alert_code: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        query = sa.select(rounds).order_by(rounds.c.started.desc())
        if table:
            query = query.where(rounds.c.table_id == table)
        if since:
            query = query.where(rounds.c.started >= since)
        if until:
            query = query.where(rounds.c.started <= until)
        if player:
            query = query.where(rounds.c.players.contains(json.dumps(player)))
        if alert_code:
            query = query.where(rounds.c.alerts.contains(json.dumps(alert_code)))
        query = query.limit(max(1, min(limit, 1000)))
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_row(row) for row in rows]

    async def count_by_hour(self, since: str) -> list[tuple[str, int]]:
        hour = sa.func.substr(rounds.c.started, 1, 13)
        query = (
            sa.select(hour, sa.func.count())
            .where(rounds.c.started >= since)
            .group_by(hour)
            .order_by(hour)
        )
        async with self.db.engine.connect() as conn:
            return [(str(h), int(n)) for h, n in (await conn.execute(query)).all()]


def _row(row: sa.Row[Any]) -> dict[str, Any]:
    return {
        "round_id": row.round_id,
        "table": row.table_id,
        "started": row.started,
        "settled": row.ended,
        "status": row.status,
        "players": json.loads(row.players or "[]"),
        "alerts": json.loads(row.alerts or "[]"),
        "total_stake": row.total_stake,
        "total_payout": row.total_payout,
        "single_source": bool(row.single_source),
    }
