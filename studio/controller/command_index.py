"""The game commands each table took, by id (studio/store/game_commands.py), as the log says:
a command's answer is its ``command_accepted`` or ``command_rejected`` round event, logged
with the command."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from studio.contract import RoundEvent
from studio.controller.table import Output
from studio.store import EventLog, GameCommands, LogRecord, TakenCommand
from studio.store.game_commands import ANSWER_EVENTS, answer_of, answered

_LOGGER = logging.getLogger(__name__)

# Log records read at a time while indexing, and how often (in records) progress is logged.
CATCH_UP_BATCH = 5000
PROGRESS_EVERY = 100_000


def answer_in(outputs: Iterable[Output], command_id: str) -> dict[str, Any] | None:
    """The answer to ``command_id`` among a table's outputs (as JSON), if they hold one."""
    for output in outputs:
        event = output.payload
        if isinstance(event, RoundEvent) and event.type in ANSWER_EVENTS:
            body = event.model_dump(mode="json")
            if body["data"].get("id") == command_id:
                return answer_of(body["type"], body["data"])
    return None


async def catch_up(
    log: EventLog,
    commands: GameCommands,
    *,
    check: Callable[[list[LogRecord]], Awaitable[None]] | None = None,
) -> int:
    """Index the commands logged after the index's ``through`` (a version that kept no
    index wrote them, or ran in between); return how many were new. Each batch is indexed
    in one transaction with ``through`` moved on, so a stop half-way loses nothing.
    ``check`` is given each batch before it is indexed (a start's: it must chain)."""
    start = after = await commands.through()
    new = read = 0
    while True:
        records = await log.read(after_id=after, limit=CATCH_UP_BATCH, kinds=["out.round_event"])
        if not records:
            break
        if check is not None:
            await check(records)
        taken = [
            TakenCommand(record.table_id, found[0], record.id, found[1])
            for record in records
            if (found := answered(record)) is not None
        ]
        after = records[-1].id
        new += await commands.add(taken, after)
        read += len(records)
        if read // PROGRESS_EVERY != (read - len(records)) // PROGRESS_EVERY:
            _LOGGER.info("indexing game commands: %d round events read, %d commands", read, new)
    if new:
        _LOGGER.info("indexed %d game commands logged after record %d", new, start)
    return new
