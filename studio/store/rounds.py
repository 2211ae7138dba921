"""Round summaries: one row per round, for history search without scanning the log.

The event log stays the source of truth; this index is rebuilt from it if lost.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.store.database import Database, metadata, rows_in_pages
from studio.store.eventlog import AppendHook, EventLog, LogRecord

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


# A round a start with ``--after-restore`` dropped: the backup held it in progress, and
# what was played of it after the backup (its end, maybe settled and paid) is not in the
# log (``numbering.resumed``, its ``dropped_round``). Not over in the studio's record, and
# never to be: neither settled nor refunded here (a refund could pay it twice), for the
# operator to reconcile with the game platform. Until 2026-12-07 it stayed ``in_progress``
# for good, beside the live round.
DROPPED_AT_RESTORE = "dropped_at_restore"


@dataclass
class RoundIndex:
    db: Database

    async def upsert(
        self, round_id: str, table_id: str, *, keep_status: Iterable[str] = (), **fields: Any
    ) -> None:
        """Set ``fields`` of the round's row (made if there is none). ``keep_status``: the
        statuses a ``status`` in ``fields`` does not replace (the other fields are set)."""
        async with self.db.engine.begin() as conn:
            await _upsert(conn, round_id, table_id, fields, tuple(keep_status))

    async def get(self, round_id: str) -> dict[str, Any] | None:
        async with self.db.reading() as conn:
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
            query = query.where(_holds(rounds.c.players, player))
        if alert_code:
            query = query.where(_holds(rounds.c.alerts, alert_code))
        query = query.limit(max(1, min(limit, 1000)))
        async with self.db.reading() as conn:
            rows = (await conn.execute(query)).all()
        return [_row(row) for row in rows]

    async def unfinished(self, *, besides: Iterable[str]) -> list[dict[str, Any]]:
        """The rounds neither settled nor cancelled (in progress or interrupted) of the
        tables not in ``besides``, oldest first."""
        query = (
            sa.select(rounds)
            .where(rounds.c.status.in_(_NOT_OVER), rounds.c.table_id.not_in(list(besides)))
            .order_by(rounds.c.started)
        )
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
        async with self.db.reading() as conn:
            return [(str(h), int(n)) for h, n in (await conn.execute(query)).all()]


async def _upsert(
    conn: AsyncConnection,
    round_id: str,
    table_id: str,
    fields: Mapping[str, Any],
    keep_status: tuple[str, ...] = (),
) -> None:
    values = {k: json.dumps(v) if k in ("players", "alerts") else v for k, v in fields.items()}
    row = (
        await conn.execute(sa.select(rounds.c.status).where(rounds.c.round_id == round_id))
    ).first()
    if row is not None:
        if row.status in keep_status:
            values.pop("status", None)
        if values:
            await conn.execute(
                rounds.update().where(rounds.c.round_id == round_id).values(**values)
            )
        return
    # A round first seen late (its opening was not indexed) still gets a row.
    first = values.get("started") or values.get("ended") or datetime.now(UTC).isoformat()
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


def dropping(round_id: str, table_id: str) -> AppendHook:
    """The round index's part of a ``numbering.resumed`` input that drops ``round_id``
    (:data:`DROPPED_AT_RESTORE`), written in the input's own transaction: the log holds
    the drop and the index says so, or neither."""

    async def hook(conn: AsyncConnection, _records: list[LogRecord]) -> None:
        await _upsert(conn, round_id, table_id, {"status": DROPPED_AT_RESTORE})

    return hook


# One JSON string as json.dumps writes it (the index's own encoding, ASCII only): any
# character but a quote or a backslash, or an escape.
_JSON_STRING = r'"(?:[^"\\]|\\["\\/bfnrtu])*"'


def _holds(column: sa.Column[str], item: str) -> sa.ColumnElement[bool]:
    """The rows whose list ``column`` (JSON, as :meth:`RoundIndex.upsert` writes it) has
    ``item`` itself as one of its strings.

    A regular expression over the whole list, element by element from its ``[``, so a match
    is a whole element: the same on SQLite (Python's ``re``, which SQLAlchemy registers as
    ``REGEXP``) and PostgreSQL (``~``), and no row's text can make it fail. Until 2026-12-05
    it was ``LIKE '%"item"%'``: ``_`` and ``%`` in the item were wildcards (``p_1`` found the
    rounds of ``p-1``, ``%`` every round) and ``", "`` matched between two players."""
    element = "".join(c if c.isascii() and c.isalnum() else "\\" + c for c in json.dumps(item))
    pattern = rf"\A\[(?:{_JSON_STRING}, )*{element}(?:, {_JSON_STRING})*\]\Z"
    return column.regexp_match(pattern)


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


def round_players(kind: str | None, data: Mapping[str, Any]) -> list[str] | None:
    """The players a round event names, for the index: the wagers when betting closed, or
    the refunds of a cancelled round (of one cancelled while betting, the only record of
    its players: until 2026-12-05 such a round was indexed with none, and a search by a
    refunded player did not find it). None: the event names no players."""
    if kind == "betting_closed":
        return sorted({w["player"] for w in data.get("wagers", [])})
    if kind == "round_cancelled":
        boxes = (data.get("refunds") or {}).get("boxes", [])
        return sorted({w["player"] for box in boxes for w in box.get("wagers", [])})
    return None


def _fold_players(
    players: list[str] | None, kind: Any, data: Mapping[str, Any]
) -> list[str] | None:
    """A round's players, as the log has them so far, after one more of its events."""
    named = round_players(kind, data)
    if named is not None and (kind == "betting_closed" or players is None):
        return named
    return players


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
    # Whether it was dealt from one source (round_opened's single_source, else the flags
    # its settlement logged); None: the log does not say.
    single_source: bool | None = None
    # Its ends (round_settled, round_cancelled) and the events of its play logged after
    # the first of them, each as (record id, type): a round ends once.
    ends: list[tuple[int, str]] = field(default_factory=list)
    late: list[tuple[int, str]] = field(default_factory=list)
    # The ``numbering.resumed`` record that dropped it (a restore), if one did.
    dropped: int | None = None


async def check_index(db: Database, log: EventLog) -> IndexReport:
    """Each indexed round against the round events of the event log.

    The index is not chained: a row edited (a payout changed in the history the console
    shows), deleted, or left behind by records cut off the log's end would otherwise go
    unseen. Every round the log opened or ended must have a row, with its table, start and
    players (none before its bets closed); a round the log settled or cancelled must be
    indexed as such, with the same time and totals; one the log has not ended may only be
    indexed as in progress or interrupted, with no totals (or, dropped by a start with
    ``--after-restore``, as :data:`DROPPED_AT_RESTORE`, which only such a round may be); its
    ``single_source`` flag that of its opening (else of its settlement's flags). A round
    ends once: a second end
    (paid and refunded) or its play logged after its end is reported, whatever the index says
    (until 2026-12-06 the last end read was taken: two controllers on one database, the
    first one's lock lost, refunded a round that the first then settled, and it passed).
    The round's alert codes must be
    those of its ``out.alert`` records, one per alert id (:func:`alert_codes`), however
    many times each was published or re-indexed. The controller logs a round event before
    it indexes it: a crash between the two leaves the row behind the log (reported) until
    the next start re-indexes each table's latest outputs. Until 2026-12-05 only what a row
    claimed was checked: a settled round indexed as in progress (its payout changed), a
    row's players emptied, or a row deleted, passed.
    """
    folded = _Folded()
    async for record in log.iterate(kinds=_INDEXED_KINDS):
        folded.add(record)
    logged = folded.rounds()
    problems: list[tuple[str, str]] = []
    for round_id, seen in logged.items():
        problems.extend((round_id, what) for what in _ended_twice(seen))
    indexed: set[str] = set()
    async for row in _index_rows(db):
        indexed.add(row.round_id)
        problems.extend((row.round_id, what) for what in _disagreements(row, logged))
    # In log order. Only a round the log opened or ended: the controller indexes each of
    # those events (a round event naming a round before its opening makes no row).
    missing = [
        (round_id, seen)
        for round_id, seen in logged.items()
        if round_id not in indexed and (seen.started is not None or seen.status is not None)
    ]
    for round_id, seen in missing:
        what = f"{seen.status}" if seen.status else "opened"
        problems.append((round_id, f"{what} in the event log, but not in the round index"))
    # A live studio logs and indexes while the check reads: a round opened or settled
    # after the log was walked read as "indexed, but the event log has no round event of
    # it (records deleted?)" or as ended in the index only (a review ran `studio audit
    # verify` beside a dealing table: 2 false failures in 100 runs, until 2026-12-07). Each
    # round found wanting is read again, its records and its row at once, until a reading
    # finds what the last one did: a real disagreement stays, a round caught moving does not.
    for _ in range(_RECHECKS):
        suspects = sorted({round_id for round_id, _ in problems})
        if not suspects:
            break
        again = [problem for round_id in suspects for problem in await _recheck(db, log, round_id)]
        settled = sorted(again) == sorted(problems)
        problems = again
        if settled:
            break
    return IndexReport(len(indexed) + len(missing), problems)


# A start's --after-restore (studio.controller.numbering.NUMBERING_RESUMED): the round it
# dropped, if any, is indexed as DROPPED_AT_RESTORE.
_RESUMED = "numbering.resumed"
_INDEXED_KINDS = ["out.round_event", "out.alert", _RESUMED]
# Readings of a round found wanting (see check_index): a round moves a few times a second
# at the most, so a second reading nearly always settles it.
_RECHECKS = 3


class _Folded:
    """What the log's round events and alerts say of each round (see :func:`check_index`),
    taken a record at a time (the log is walked in pages, never held whole)."""

    def __init__(self) -> None:
        self.logged: dict[str, _Logged] = {}
        self.alerts: dict[str, list[dict[str, Any]]] = {}

    def add(self, record: Any) -> None:
        if record.kind == _RESUMED:
            dropped = record.payload.get("dropped_round")
            if isinstance(dropped, dict) and isinstance(dropped.get("round_id"), str):
                seen = self.logged.setdefault(dropped["round_id"], _Logged(record.table_id))
                seen.dropped = record.id
            return
        if record.round_id is None or record.round_id == "-":  # "-": between rounds
            return
        if record.kind == "out.alert":
            self.alerts.setdefault(record.round_id, []).append(_alert_fields(record.payload))
            return
        seen = self.logged.setdefault(record.round_id, _Logged(record.table_id))
        kind, data = record.payload.get("type"), _data(record.payload)
        if seen.ends and kind in _PLAY:
            seen.late.append((record.id, str(kind)))
        if kind == "round_opened":
            seen.started = record.payload.get("ts")
            if "single_source" in data:
                seen.single_source = bool(data["single_source"])
        seen.players = _fold_players(seen.players, kind, data)
        if kind in _ENDS:
            seen.ends.append((record.id, str(kind)))
            flags = data.get("flags")
            if seen.single_source is None and isinstance(flags, dict) and "single_source" in flags:
                seen.single_source = bool(flags["single_source"])
            # As the controller indexes it (studio.controller.service's _index).
            totals = (data.get("result") or data.get("refunds") or {}).get("totals", {})
            seen.ended = record.payload.get("ts")
            seen.status = "settled" if kind == "round_settled" else "cancelled"
            seen.total_stake = totals.get("stakes", "0.00")
            seen.total_payout = totals.get("payouts", "0.00")

    def rounds(self) -> dict[str, _Logged]:
        for round_id, payloads in self.alerts.items():
            if round_id in self.logged:
                self.logged[round_id].alerts = payloads
        return self.logged


async def _recheck(db: Database, log: EventLog, round_id: str) -> list[tuple[str, str]]:
    """One round's problems, its records and its index row read again (see check_index)."""
    folded = _Folded()
    for record in await log.read(round_id=round_id, kinds=_INDEXED_KINDS):
        folded.add(record)
    logged = folded.rounds()
    seen = logged.get(round_id)
    found = [(round_id, what) for what in _ended_twice(seen)] if seen is not None else []
    async with db.engine.connect() as conn:
        row = (await conn.execute(sa.select(rounds).where(rounds.c.round_id == round_id))).first()
    if row is not None:
        found.extend((round_id, what) for what in _disagreements(row, logged))
    elif seen is not None and (seen.started is not None or seen.status is not None):
        what = f"{seen.status}" if seen.status else "opened"
        found.append((round_id, f"{what} in the event log, but not in the round index"))
    return found


# A round's ends, and the events of its play, which none of them may follow: a second
# controller on the same database (its lock lost) once refunded a round the first then
# settled, and the audit, keeping the last end, passed it.
_ENDS = ("round_settled", "round_cancelled")
_PLAY = (
    "round_opened",
    "betting_opened",
    "betting_closed",
    "card_dealt",
    "card_confirmed",
    *_ENDS,
)


def _ended_twice(seen: _Logged) -> list[str]:
    """What the log says of a round that no round may have: two ends (paid and refunded),
    or its play going on after its end."""
    out = []
    if len(seen.ends) > 1:
        ends = ", ".join(f"{kind} (record {record_id})" for record_id, kind in seen.ends)
        out.append(f"ended {len(seen.ends)} times in the event log: {ends}")
    first = seen.ends[0][0] if seen.ends else None
    out.extend(
        f"{kind} (record {record_id}) after its end (record {first})"
        for record_id, kind in seen.late
        if kind not in _ENDS  # said above
    )
    return out


def _index_rows(db: Database) -> AsyncIterator[sa.Row[Any]]:
    """Every row of the round index, by round id, read in pages: it has a row per round
    ever played."""
    return rows_in_pages(db, rounds, [rounds.c.round_id])


def _alert_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """Of a logged alert, only what :func:`alert_codes` reads: not its evidence."""
    return {k: payload.get(k) for k in ("alert_id", "code")}


@dataclass
class IndexRepair:
    """What ``studio audit repair-index`` changes: (round, before, after) per list changed,
    and the indexed rounds the log has no round event of (left as they are: the row may be
    the last record of a round whose records were cut off the log)."""

    alerts: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    players: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    unlogged: list[str] = field(default_factory=list)
    # Indexed with players the log names none of (its records from the closing of bets on
    # gone, or never logged): (round, players), left as they are.
    unnamed: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def repaired(self) -> set[str]:
        return {round_id for round_id, _, _ in self.alerts + self.players}


async def plan_repair(db: Database, log: EventLog) -> IndexRepair:
    """Each indexed round's alert codes (:func:`alert_codes`: the rows a version before
    2026-12-05 inflated) and players (``round_players``: a round cancelled while betting was
    indexed with none) as the log has them, where they differ; nothing is written. A row
    whose round has no round event in the log is not changed but reported: until
    2026-12-05 its players were emptied (after records cut off the log's end, the index's
    row was the last record of who played)."""
    alerts: dict[str, list[dict[str, Any]]] = {}
    players: dict[str, list[str] | None] = {}
    async for record in log.iterate(kinds=["out.round_event", "out.alert"]):
        if record.round_id is None or record.round_id == "-":
            continue
        if record.kind == "out.alert":
            alerts.setdefault(record.round_id, []).append(_alert_fields(record.payload))
            continue
        kind, data = record.payload.get("type"), _data(record.payload)
        players[record.round_id] = _fold_players(players.get(record.round_id), kind, data)
    plan = IndexRepair()
    async for row in _index_rows(db):
        if row.round_id not in players:
            plan.unlogged.append(row.round_id)
            continue
        named = players[row.round_id]
        for column, after, changes in (
            ("alerts", alert_codes(alerts.get(row.round_id, [])), plan.alerts),
            ("players", named or [], plan.players),
        ):
            raw = getattr(row, column)
            try:
                before = json.loads(raw or "[]")
            except (ValueError, RecursionError):  # (JSON nested too deep: RecursionError)
                before = [str(raw)]
            if before == after:
                continue
            if column == "players" and named is None:
                # No event of the log names its players: they are not emptied (the index
                # may be the last record of who played a round cut short in the log).
                plan.unnamed.append((row.round_id, before))
                continue
            changes.append((row.round_id, before, after))
    return plan


async def apply_repair(db: Database, plan: IndexRepair) -> None:
    """Write what :func:`plan_repair` found, in one transaction."""
    async with db.engine.begin() as conn:
        for column, changes in (("alerts", plan.alerts), ("players", plan.players)):
            for round_id, _, after in changes:
                await conn.execute(
                    rounds.update()
                    .where(rounds.c.round_id == round_id)
                    .values({column: json.dumps(after)})
                )


def _data(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    data = payload.get("data")
    return data if isinstance(data, dict) else {}


_SETTLED = ("status", "ended", "stakes", "payouts")
# What a round the log has not ended may be indexed as: ``interrupted`` on a clean stop
# (``out.round_interrupted``), until the next start resumes it.
_NOT_OVER = ("in_progress", "interrupted")


def _shown(value: object, limit: int = 120) -> str:
    """``value``'s repr, cut to ``limit`` characters (a damaged row held 400 KB of it)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


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
    except (TypeError, ValueError, RecursionError):  # (JSON nested too deep: RecursionError)
        players = None
        out.append(f"players {_shown(row.players)} is not JSON")
    # No players until its bets closed (the index's default, an empty list).
    logged_players = seen.players if seen.players is not None else []
    if players is not None and players != logged_players:
        out.append(f"players {players}, the log says {logged_players}")
    try:
        codes = json.loads(row.alerts or "[]")
    except (TypeError, ValueError, RecursionError):
        out.append(f"alerts {_shown(row.alerts)} is not JSON")
    else:
        in_log = alert_codes(seen.alerts)
        if not isinstance(codes, list) or Counter(map(str, codes)) != Counter(in_log):
            out.append(
                f"alerts {_tally(codes)}, the log has {_tally(in_log)} (each alert once, by id)"
            )
    if seen.single_source is not None and bool(row.single_source) != seen.single_source:
        out.append(f"single_source {bool(row.single_source)}, the log says {seen.single_source}")
    if seen.status is not None:
        # Over in the log: the row must say so, whatever it claims.
        claimed = (row.status, row.ended, row.total_stake, row.total_payout)
        truth = (seen.status, seen.ended, seen.total_stake, seen.total_payout)
        for name, mine, theirs in zip(_SETTLED, claimed, truth, strict=True):
            if mine != theirs:
                out.append(f"{name} {mine}, the log says {theirs}")
    elif row.status in ("settled", "cancelled"):
        out.append(f"{row.status}, but the log has no round_settled or round_cancelled")
    elif seen.dropped is not None and row.status != DROPPED_AT_RESTORE:
        out.append(
            f"status {row.status}, the log dropped it at a restore "
            f"({_RESUMED}, record {seen.dropped}): {DROPPED_AT_RESTORE}"
        )
    elif seen.dropped is None and row.status == DROPPED_AT_RESTORE:
        out.append(f"{DROPPED_AT_RESTORE}, but no {_RESUMED} record of the log drops it")
    elif row.status not in (*_NOT_OVER, DROPPED_AT_RESTORE):
        out.append(f"status {row.status}, the log has not ended it")
    else:
        # In progress, interrupted or dropped at a restore: not ended, so no totals.
        for name, mine in (("stakes", row.total_stake), ("payouts", row.total_payout)):
            if mine != "0.00":
                out.append(f"{name} {mine}, the log has not ended it")
    return out


def _tally(codes: Any) -> str:
    """Alert codes as ``misscan x21, timeout x1`` (by code), ``none`` for no alert."""
    if not isinstance(codes, list):
        return repr(codes)
    counts = Counter(map(str, codes))
    return ", ".join(f"{code} x{n}" for code, n in sorted(counts.items())) or "none"
