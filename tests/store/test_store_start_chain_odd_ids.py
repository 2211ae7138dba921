"""A row whose id is not an integer (SQLite keeps text, or NULL in a table rebuilt without
its constraints) is damage a controller's start refuses, naming where it is: its walk
(:class:`StartChain`) raises :class:`ChainBroken` (``studio controller run``: exit 2).

Until 2026-12-06 a read that returned a text id ('530x') made the start end in a TypeError
traceback (exit 1: ``min()`` over numbers and text); a text id read after the head
(SQLite sorts text after every number) was named as the record after the head ("record 533
... where record 533 should be, its id is text ('531x')") rather than where it was; and a
NULL id on record 100 made `studio audit verify` say "chain BROKEN at record 1". SQLite
only: PostgreSQL keeps each column's type."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from studio.store import Database, EventLog
from studio.store.eventlog import ChainBroken, StartChain

RECORDS = 20


async def logged(path: Path) -> None:
    async with Database(f"sqlite:///{path}") as db:
        await db.create_all()
        log = EventLog(db)
        for n in range(RECORDS):
            await log.append("t1", "game.command", {"n": n})


def damaged(path: Path, *statements: str) -> None:
    with sqlite3.connect(path) as conn:
        for statement in statements:
            conn.execute(statement)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("read_after", "covered"), [(8, None), (12, [12])])
async def test_a_text_id_is_refused_where_its_record_was(
    tmp_path: Path, read_after: int, covered: list[int] | None
) -> None:
    path = tmp_path / "studio.db"
    await logged(path)
    damaged(path, "UPDATE event_log SET id = '10x' WHERE id = 10")
    async with Database(f"sqlite:///{path}") as db:
        log = EventLog(db)
        records = await log.read(after_id=read_after, limit=50)
        ids = covered if covered is not None else [record.id for record in records]
        with pytest.raises(ChainBroken) as refused:
            await StartChain(log).cover(ids)
        assert refused.value.record_id == 11, str(refused.value)
        assert "record 11 does not chain: gap: expected id 10" in str(refused.value)


@pytest.mark.timeout(30)
async def test_a_text_id_of_the_last_record_is_named_after_the_one_before(
    tmp_path: Path,
) -> None:
    path = tmp_path / "studio.db"
    await logged(path)
    damaged(path, f"UPDATE event_log SET id = '{RECORDS}x' WHERE id = {RECORDS}")
    async with Database(f"sqlite:///{path}") as db:
        log = EventLog(db)
        ids = [record.id for record in await log.read(after_id=RECORDS - 3)]
        with pytest.raises(ChainBroken) as refused:
            await StartChain(log).cover(ids)
        text = str(refused.value)
        assert refused.value.record_id == RECORDS, text
        assert (
            f"where record {RECORDS} should be, its id is text ('{RECORDS}x'), not an "
            f"integer (read after record {RECORDS - 1} in id order)"
        ) in text


@pytest.mark.timeout(30)
async def test_a_null_id_is_named_by_the_gap_it_leaves(tmp_path: Path) -> None:
    path = tmp_path / "studio.db"
    await logged(path)
    damaged(  # (an event_log without its constraints, as one rebuilt by hand)
        path,
        "CREATE TABLE e2 AS SELECT * FROM event_log",
        "DROP TABLE event_log",
        "ALTER TABLE e2 RENAME TO event_log",
        "UPDATE event_log SET id = NULL WHERE id = 10",
    )
    async with Database(f"sqlite:///{path}") as db:
        report = await EventLog(db).verify()
    assert report.first_bad_id == 11, report
    assert report.reason.startswith("gap: expected id 10; and 1 row(s) whose id is NULL")
