"""The index of the game commands each table took (studio/store/game_commands.py): written
in the transaction of the command's log records, so the log and the index never disagree;
the first answer to an id stands."""

from __future__ import annotations

from typing import Any

import pytest

from studio.errors import StoreError
from studio.store import Database, Entry, EventLog, GameCommands, LogRecord, TakenCommand
from studio.store.database import rows_in_pages
from studio.store.game_commands import game_commands, indexing, key


def command(cid: str) -> list[Entry]:
    data = {"id": cid, "type": "vote", "seat": 1, "player": "p1", "action": "hit"}
    return [Entry("t1", "game.command", data), Entry("t1", "out.round_event", {"type": "x"})]


async def test_the_index_commits_with_the_log_or_neither_does(database: Database) -> None:
    log, commands = EventLog(database), GameCommands(database)

    async def failing(conn: Any, records: list[LogRecord]) -> None:
        await indexing("t1", "c1", {"accepted": True})(conn, records)
        raise StoreError("the index write failed")

    with pytest.raises(StoreError, match="the index write failed"):
        await log.append_batch(command("c1"), also=failing)
    assert await log.read() == []
    assert await commands.answer("t1", "c1") is None
    assert await commands.through() == 0
    records = await log.append_batch(command("c1"), also=indexing("t1", "c1", {"accepted": True}))
    assert [r.id for r in records] == [1, 2]  # the failed append left no id taken
    assert await commands.answer("t1", "c1") == {"accepted": True}
    assert await commands.first_records("t1", ["c1", "c2"]) == {"c1": 1}
    assert await commands.first_records("t2", ["c1"]) == {}  # per table
    assert await commands.through() == 2
    assert (await log.verify()).ok


async def test_the_first_answer_stands(database: Database) -> None:
    commands = GameCommands(database)
    first = TakenCommand("t1", "c1", 5, {"accepted": False, "reason": "bets are closed"})
    assert await commands.add([first], through=9) == 1
    again = TakenCommand("t1", "c1", 12, {"accepted": True})
    other = TakenCommand("t1", "c2", 12, {"accepted": True, "taken": {"stake": "10.00"}})
    assert await commands.add([again, other], through=7) == 1
    assert await commands.answer("t1", "c1") == first.answer
    assert await commands.answer("t1", "c2") == other.answer
    assert await commands.first_records("t1", ["c1", "c2"]) == {"c1": 5, "c2": 12}
    assert await commands.through() == 9  # never back


async def test_the_index_is_read_in_pages_in_key_order(database: Database) -> None:
    commands = GameCommands(database)
    taken = [
        TakenCommand(table, f"c{n}", n, {"accepted": True})
        for n, table in enumerate(["t2", "t1", "t2", "t1", "t1", "t3", "t2"], 1)
    ]
    await commands.add(taken, through=7)
    columns = game_commands.c
    rows = [
        r
        async for r in rows_in_pages(
            database, game_commands, [columns.table_id, columns.command_id], size=2
        )
    ]
    assert [(r.table_id, r.command_id) for r in rows] == sorted(
        (c.table_id, key(c.command_id)) for c in taken
    )
