"""Every game command each table took, by its id, with its first answer: a command sent again
under its id, however late, is answered with that and never applied twice.

Until 2026-12-05 the ids and answers were part of each table's state in the controller's
memory, growing with its history for as long as it ran (and in every checkpoint). Now they
are here: a command's row is written in the same transaction as its log records
(:func:`indexing`), so the log holds a command taken and its row, or neither.
``through`` says how far the index accounts for the log: a start indexes the records after
it first (a log written by a version that kept no index, or that ran in between), from the
log's own answers (``studio/controller/command_index.py``).

Not chained: an index of the chained log, rebuilt from it (a row's ``record_id`` is the log
record of the command's input, or of the answer logged with it, for rows built from the log).
An id is kept as its JSON string (ASCII): any id the log can hold, NUL among them, which
PostgreSQL's text refuses (a review: a bet under such an id over MQTT ended the controller).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.errors import StoreError
from studio.store.database import (
    Database,
    database_words,
    log_database_error,
    metadata,
    rows_in_pages,
)
from studio.store.eventlog import AppendHook, EventLog, LogRecord

game_commands = sa.Table(
    "game_commands",
    metadata,
    sa.Column("table_id", sa.String(64), primary_key=True),
    # The id as a JSON string: up to 128 characters, each at most 12 escaped.
    sa.Column("command_id", sa.String(1600), primary_key=True),
    sa.Column("record_id", sa.BigInteger, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),
)
# One row (id 1): the last log record the index accounts for.
game_commands_through = sa.Table(
    "game_commands_through",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("record_id", sa.BigInteger, nullable=False),
)

# Ids looked up at a time (well under SQLite's bound parameters).
LOOKUP_BATCH = 500
AUDIT_BATCH = 5000  # log records the audit reads at a time
# A command's answer is its round event (studio/controller/table.py), logged with it.
ANSWER_EVENTS = ("command_accepted", "command_rejected")


def answer_of(event_type: str, data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The answer a command's event gives (what ``/commands`` answers), or None for an
    event that answers no command."""
    if event_type == "command_accepted":
        return {"accepted": True, **{k: v for k, v in data.items() if k not in ("id", "command")}}
    if event_type == "command_rejected":
        # `code` only where the refusal has one (since 2026-12-06: `round_not_open`).
        code = {"code": data["code"]} if "code" in data else {}
        return {"accepted": False, "reason": data.get("reason"), **code}
    return None


def answered(record: LogRecord) -> tuple[str, dict[str, Any]] | None:
    """The command id a logged round event answers, and its answer (None: answers none)."""
    data = record.payload.get("data")
    if record.kind != "out.round_event" or not isinstance(data, dict):
        return None
    answer = answer_of(str(record.payload.get("type")), data)
    cid = data.get("id")
    return (cid, answer) if answer is not None and isinstance(cid, str) else None


@dataclass(frozen=True)
class TakenCommand:
    table_id: str
    command_id: str
    record_id: int
    answer: Mapping[str, Any]


def key(command_id: str) -> str:
    """How an id is kept: its JSON string, ASCII (``"c1"``, ``"nul\\u0000"``)."""
    return json.dumps(command_id)


@contextlib.contextmanager
def _store_errors(doing: str) -> Iterator[None]:
    """The database's errors as :class:`StoreError`: a caller refuses the input, as when the
    log cannot be written (a dropped connection ended the MQTT consumer, a review found)."""
    try:
        yield
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        log_database_error(f"game commands: {doing}", exc)
        raise StoreError(f"game commands: {doing}: {database_words(exc)}") from exc


@dataclass
class GameCommands:
    db: Database

    async def answer(self, table_id: str, command_id: str) -> dict[str, Any] | None:
        """The first answer to the table's command ``command_id``; None if it never took one."""
        columns = game_commands.c
        where = (columns.table_id == table_id) & (columns.command_id == key(command_id))
        with _store_errors("look-up"):
            async with self.db.engine.connect() as conn:
                row = (await conn.execute(sa.select(columns.answer).where(where))).first()
        return dict(json.loads(row.answer)) if row else None

    async def first_records(self, table_id: str, command_ids: Iterable[str]) -> dict[str, int]:
        """The log record of each id's first command (ids never taken are left out)."""
        keys = {key(cid): cid for cid in command_ids}
        with _store_errors("look-up"):
            async with self.db.engine.connect() as conn:
                rows = await _rows_in(conn, table_id, keys)
        return {keys[row.command_id]: int(row.record_id) for row in rows}

    async def through(self) -> int:
        with _store_errors("reading how far they are indexed"):
            async with self.db.engine.connect() as conn:
                return await _through_in(conn)

    async def add(self, taken: list[TakenCommand], through: int) -> int:
        """Index ``taken`` (the ids already indexed are left as they are: the first answer
        stands) and move ``through`` on, in one transaction; return how many were new."""
        with _store_errors("indexing"):
            async with self.db.engine.begin() as conn:
                return await _add_in(conn, taken, through)


def indexing(table_id: str, command_id: str, answer: Mapping[str, Any]) -> AppendHook:
    """What the append of a command's log records runs to index it in their transaction
    (its input is the first of them). The controller looked the id up under the table's
    lock just before: it is new."""

    async def add(conn: AsyncConnection, records: list[LogRecord]) -> int:
        taken = TakenCommand(table_id, command_id, records[0].id, answer)
        return await _add_in(conn, [taken], records[-1].id, new=True)

    return add


async def _through_in(conn: AsyncConnection) -> int:
    query = sa.select(game_commands_through.c.record_id).where(game_commands_through.c.id == 1)
    found = (await conn.execute(query)).scalar()
    if found is None:
        return 0
    if isinstance(found, bool) or not isinstance(found, int):  # (SQLite keeps text there too)
        raise StoreError(
            f"{game_commands_through.name}: its record_id {found!r} is not a record id: the "
            "command index is damaged (a controller's start cannot index on from it)"
        )
    return found


async def _add_in(
    conn: AsyncConnection, taken: list[TakenCommand], through: int, *, new: bool = False
) -> int:
    """Index ``taken`` (``new``: none is indexed yet) and move ``through`` on."""
    rows: list[dict[str, Any]] = []
    by_table: dict[str, list[TakenCommand]] = {}
    for command in taken:
        by_table.setdefault(command.table_id, []).append(command)
    for table_id, commands in by_table.items():
        keys = {key(c.command_id) for c in commands}
        known = set() if new else {row.command_id for row in await _rows_in(conn, table_id, keys)}
        for command in commands:
            command_key = key(command.command_id)
            if command_key in known:
                continue
            known.add(command_key)
            rows.append(
                {
                    "table_id": table_id,
                    "command_id": command_key,
                    "record_id": command.record_id,
                    "answer": _json(command.answer),
                }
            )
    if rows:
        await conn.execute(game_commands.insert(), rows)
    row = game_commands_through.c
    moved = await conn.execute(
        game_commands_through.update()
        .where((row.id == 1) & (row.record_id < through))
        .values(record_id=through)
    )
    if not moved.rowcount and not await _through_in(conn):
        await conn.execute(game_commands_through.insert().values(id=1, record_id=through))
    return len(rows)


@dataclass
class CommandIndexReport:
    commands: int = 0  # commands the log answered, up to the index's ``through``
    # Answered after it (an older version ran since): the controller's next start indexes them.
    pending: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (table/id, what)

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_commands(db: Database, log: EventLog) -> CommandIndexReport:
    """The index against the log: each command the log answered must be indexed, with that
    answer and a record between its input and its answer (a replay tells a command logged
    again by it), and nothing else. Not chained, the index could otherwise be edited unseen:
    a row deleted lets a command sent again be taken again; a row added refuses one never
    taken; a row's record moved has a replay skip the command.

    Read a batch at a time, each batch's commands looked up in the index: it keeps no
    command of the log in memory (a first version kept them all, about 1 KB each). What
    was taken after its start (a live studio's commands) is not looked at.
    """
    report = CommandIndexReport()
    index = GameCommands(db)
    through = await index.through()
    last_input: dict[str, tuple[int, object]] = {}  # each table's last game command logged
    found = 0  # commands of the log whose row agrees
    named: set[tuple[str, str]] = set()  # rows already reported (a few)
    after = 0
    while records := await log.read(
        after_id=after, limit=AUDIT_BATCH, kinds=["game.command", "out.round_event"]
    ):
        after = records[-1].id
        # (table, key) -> (its input's record, its answer's record, the answer)
        logged: list[tuple[tuple[str, str], int, int, dict[str, Any]]] = []
        for record in records:
            if record.kind == "game.command":
                last_input[record.table_id] = (record.id, record.payload.get("id"))
                continue
            answer = answered(record)
            if answer is None:
                continue
            if record.id > through:
                report.pending += 1
                continue
            cid, said = answer
            input_id, input_cid = last_input.get(record.table_id, (record.id, None))
            at = (record.table_id, key(cid))
            logged.append((at, input_id if input_cid == cid else record.id, record.id, said))
        rows = await _rows_of(db, [at for at, *_ in logged])
        for at, first, last, said in logged:
            report.commands += 1
            row = rows.get(at)
            problem = _disagreement(row, first, last, said)
            found += problem is None
            if problem is not None:
                named.add(at)
                report.problems.append((f"{at[0]}/{at[1]}", problem))
    # Rows of no command taken: no row is ever past `through` (it moves with each row) but
    # those taken while this ran; and the rows up to it are the commands found, unless a
    # row disagrees (each then named above) or one more is there.
    for row in await _rows_past_the_index(db):
        report.problems.append(
            (
                f"{row.table_id}/{row.command_id}",
                f"indexed at record {row.record_id}, past the index",
            )
        )
    if report.problems or await _rows_through(db, through) > found:
        report.problems.extend(await _never_answered(db, log, through, named))
    return report


def _disagreement(
    row: sa.Row[Any] | None, first: int, last: int, said: dict[str, Any]
) -> str | None:
    if row is None:
        return f"taken at record {first}, not indexed: it would be taken again"
    if isinstance(row.record_id, bool) or not isinstance(row.record_id, int):
        return f"indexed at record {row.record_id!r}, which is not a record id, logged at {first}"
    if not first <= row.record_id <= last:
        return f"indexed at record {row.record_id}, logged at {first}"
    try:
        indexed = json.loads(row.answer)
    except (TypeError, ValueError, RecursionError):  # (JSON nested too deep: RecursionError)
        return f"indexed answer {_shown(row.answer)} is not JSON, logged {_json(said)}"
    if indexed != said:
        return f"indexed answer {_shown(row.answer)[1:-1]}, logged {_json(said)}"
    return None


async def _rows_in(conn: AsyncConnection, table_id: str, keys: Iterable[str]) -> list[sa.Row[Any]]:
    """The table's rows of these keys (ids as kept), looked up LOOKUP_BATCH at a time."""
    wanted = sorted(set(keys))
    columns = game_commands.c
    rows: list[sa.Row[Any]] = []
    for start in range(0, len(wanted), LOOKUP_BATCH):
        query = sa.select(game_commands).where(
            (columns.table_id == table_id)
            & columns.command_id.in_(wanted[start : start + LOOKUP_BATCH])
        )
        rows.extend(await conn.execute(query))
    return rows


async def _rows_of(db: Database, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    by_table: dict[str, list[str]] = {}
    for table_id, command_key in wanted:
        by_table.setdefault(table_id, []).append(command_key)
    async with db.engine.connect() as conn:
        return {
            (row.table_id, row.command_id): row
            for table_id, keys in by_table.items()
            for row in await _rows_in(conn, table_id, keys)
        }


async def _rows_past_the_index(db: Database) -> list[sa.Row[Any]]:
    """The rows past ``through`` as it stands (one statement: a command taken in between
    moves both)."""
    through = sa.select(game_commands_through.c.record_id).where(game_commands_through.c.id == 1)
    past = sa.func.coalesce(through.scalar_subquery(), 0)  # none: every row is past it
    query = sa.select(game_commands).where(game_commands.c.record_id > past)
    async with db.engine.connect() as conn:
        return list((await conn.execute(query)).all())


async def _rows_through(db: Database, through: int) -> int:
    query = sa.select(sa.func.count()).where(game_commands.c.record_id <= through)
    async with db.engine.connect() as conn:
        return int((await conn.execute(query)).scalar() or 0)


async def _never_answered(
    db: Database, log: EventLog, through: int, named: set[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The rows whose record is neither their command's input nor its answer (looked for
    only when there are more rows than commands the log answered)."""
    problems = []
    page: list[sa.Row[Any]] = []

    async def check(page: list[sa.Row[Any]]) -> None:
        records = {r.id: r for r in await log.read(ids=[int(row.record_id) for row in page])}
        for row in page:
            if (row.table_id, row.command_id) in named:
                continue
            record = records.get(row.record_id)
            if record is None or record.table_id != row.table_id or not _names(record, row):
                problems.append(
                    (
                        f"{row.table_id}/{row.command_id}",
                        f"indexed (record {row.record_id}), never answered",
                    )
                )

    async for row in _rows(db):
        if isinstance(row.record_id, bool) or not isinstance(row.record_id, int):
            if (row.table_id, row.command_id) not in named:  # (SQLite keeps text there too)
                what = f"indexed at record {row.record_id!r}, which is not a record id"
                problems.append((f"{row.table_id}/{row.command_id}", what))
            continue
        if row.record_id > through:
            continue  # taken after the audit began
        page.append(row)
        if len(page) == LOOKUP_BATCH:
            await check(page)
            page = []
    if page:
        await check(page)
    return problems


def _names(record: LogRecord, row: sa.Row[Any]) -> bool:
    """Is ``record`` the input or the answer of the command of ``row``?"""
    if record.kind == "game.command":
        return bool(key(str(record.payload.get("id"))) == row.command_id)
    answer = answered(record)
    return answer is not None and bool(key(answer[0]) == row.command_id)


def _shown(value: object, limit: int = 120) -> str:
    """``value``'s repr, cut to ``limit`` characters (a damaged row held 400 KB of it)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def _json(answer: Mapping[str, Any]) -> str:
    # In the order given: an answer sent again reads as the first did.
    return json.dumps(answer, separators=(",", ":"))


def _rows(db: Database) -> AsyncIterator[sa.Row[Any]]:
    """Every row of the index, read in pages."""
    return rows_in_pages(db, game_commands, [game_commands.c.table_id, game_commands.c.command_id])
