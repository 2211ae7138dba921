"""Round summaries: one row per round, for history search without scanning the log.

The event log stays the source of truth; this index is rebuilt from it if lost.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from studio.store.database import Database, metadata
from studio.store.eventlog import EventLog

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


def alert_codes(payloads: Iterable[dict[str, Any]]) -> list[str]:
    """A round's alert codes as the index holds them: one per alert, by its id, in the order
    the alerts were first logged. An alert is logged whole at each change of state (raised,
    acknowledged, resolved) and a restart re-indexes what was logged: neither counts it again.
    ``payloads``: the round's ``out.alert`` records, in log order."""
    codes: dict[str, str] = {}
    for payload in payloads:
        codes.setdefault(str(payload.get("alert_id")), str(payload.get("code")))
    return list(codes.values())


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


@dataclass(frozen=True, slots=True)
class IndexReport:
    """The round index checked against the event log: ``problems`` as (round_id, what)."""

    rounds: int
    problems: list[tuple[str, str]]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Logged:
    """What the log says of one round (its ``out.round_event`` records)."""

    table_id: str
    started: str | None = None
    players: list[str] | None = None
    ended: str | None = None
    status: str | None = None
    total_stake: str | None = None
    total_payout: str | None = None
    # Its out.alert records, each as its alert_id and code.
    alerts: list[dict[str, Any]] = field(default_factory=list)


async def check_index(db: Database, log: EventLog) -> IndexReport:
    """Each indexed round against the round events of the event log.

    The index is not chained: a row edited (a payout changed in the history the console
    shows) or one left behind by records cut off the log's end would otherwise go unseen.
    The controller logs a round event before it indexes it, so only what the index
    claims is checked: a round indexed as settled must be settled in the log, with the
    same time, totals and players; one the log has not settled yet may still be indexed as
    in progress (the index lags the log by one write, or a crash came between the two).
    The round's alert codes must be those of its ``out.alert`` records, one per alert id
    (:func:`alert_codes`), however many times each was published or re-indexed.
    """
    logged: dict[str, _Logged] = {}
    alerts: dict[str, list[dict[str, Any]]] = {}
    async for record in log.iterate(kinds=["out.round_event", "out.alert"]):
        if record.round_id is None:
            continue
        if record.kind == "out.alert":
            alerts.setdefault(record.round_id, []).append(_alert_fields(record.payload))
            continue
        seen = logged.setdefault(record.round_id, _Logged(record.table_id))
        kind, data = record.payload.get("type"), record.payload.get("data") or {}
        if kind == "round_opened":
            seen.started = record.payload.get("ts")
        elif kind == "betting_closed":
            seen.players = sorted({w["player"] for w in data.get("wagers", [])})
        elif kind in ("round_settled", "round_cancelled"):
            # As the controller indexes it (studio.controller.service's _index).
            totals = (data.get("result") or data.get("refunds") or {}).get("totals", {})
            seen.ended = record.payload.get("ts")
            seen.status = "settled" if kind == "round_settled" else "cancelled"
            seen.total_stake = totals.get("stakes", "0.00")
            seen.total_payout = totals.get("payouts", "0.00")
    for round_id, payloads in alerts.items():
        if round_id in logged:
            logged[round_id].alerts = payloads
    problems: list[tuple[str, str]] = []
    count = 0
    async for row in _index_rows(db):
        count += 1
        problems.extend((row.round_id, what) for what in _disagreements(row, logged))
    return IndexReport(count, problems)


async def _index_rows(db: Database) -> AsyncIterator[sa.Row[Any]]:
    """Every row of the round index, by round id, read in pages: it has a row per round
    ever played."""
    after: str | None = None
    while True:
        query = sa.select(rounds).order_by(rounds.c.round_id).limit(5000)
        if after is not None:
            query = query.where(rounds.c.round_id > after)
        async with db.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        if not rows:
            return
        for row in rows:
            yield row
        after = rows[-1].round_id


def _alert_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """Of a logged alert, only what :func:`alert_codes` reads: not its evidence."""
    return {k: payload.get(k) for k in ("alert_id", "code")}


async def repair_alerts(db: Database, log: EventLog) -> list[tuple[str, list[str], list[str]]]:
    """Set every indexed round's alert codes from the log (:func:`alert_codes`), where they
    differ: the rows a version before 2026-12-05 inflated (each start added the alerts of the
    latest rounds again). The index is derived from the log; nothing else changes.
    Returns (round, codes before, codes after) per row changed."""
    logged: dict[str, list[dict[str, Any]]] = {}
    async for record in log.iterate(kinds=["out.alert"]):
        if record.round_id is not None:
            logged.setdefault(record.round_id, []).append(_alert_fields(record.payload))
    changed: list[tuple[str, list[str], list[str]]] = []
    async for row in _index_rows(db):
        try:
            before = json.loads(row.alerts or "[]")
        except json.JSONDecodeError:
            before = [str(row.alerts)]
        codes = alert_codes(logged.get(row.round_id, []))
        if before != codes:
            async with db.engine.begin() as conn:
                await conn.execute(
                    rounds.update()
                    .where(rounds.c.round_id == row.round_id)
                    .values(alerts=json.dumps(codes))
                )
            changed.append((row.round_id, before, codes))
    return changed


_SETTLED = ("status", "ended", "stakes", "payouts")


def _disagreements(row: sa.Row[Any], logged: dict[str, _Logged]) -> list[str]:
    seen = logged.get(row.round_id)
    if seen is None:
        return ["indexed, but the event log has no round event of it (records deleted?)"]
    out = []
    if row.table_id != seen.table_id:
        out.append(f"table {row.table_id!r}, the log says {seen.table_id!r}")
    if seen.started is not None and row.started != seen.started:
        out.append(f"started {row.started}, the log says {seen.started}")
    try:
        players = json.loads(row.players or "[]")
    except json.JSONDecodeError:
        players = None
        out.append(f"players {row.players!r} is not JSON")
    if seen.players is not None and players and players != seen.players:
        out.append(f"players {players}, the log says {seen.players}")
    try:
        codes = json.loads(row.alerts or "[]")
    except json.JSONDecodeError:
        out.append(f"alerts {row.alerts!r} is not JSON")
    else:
        in_log = alert_codes(seen.alerts)
        if not isinstance(codes, list) or Counter(map(str, codes)) != Counter(in_log):
            out.append(
                f"alerts {_tally(codes)}, the log has {_tally(in_log)} (each alert once, by id)"
            )
    if row.status in ("settled", "cancelled"):
        if seen.status is None:
            out.append(f"{row.status}, but the log has no round_settled or round_cancelled")
            return out
        claimed = (row.status, row.ended, row.total_stake, row.total_payout)
        truth = (seen.status, seen.ended, seen.total_stake, seen.total_payout)
        for name, mine, theirs in zip(_SETTLED, claimed, truth, strict=True):
            if mine != theirs:
                out.append(f"{name} {mine}, the log says {theirs}")
    return out


def _tally(codes: Any) -> str:
    """Alert codes as ``misscan x21, timeout x1`` (by code), ``none`` for no alert."""
    if not isinstance(codes, list):
        return repr(codes)
    counts = Counter(map(str, codes))
    return ", ".join(f"{code} x{n}" for code, n in sorted(counts.items())) or "none"
