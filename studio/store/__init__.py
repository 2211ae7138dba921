"""Durable, hash-chained event log (SQLite by default, PostgreSQL by URL)."""

from studio.store.checkpoints import Checkpoints, StoredCheckpoint
from studio.store.database import Database, async_url, safe_url
from studio.store.eventlog import ChainReport, Entry, EventLog, LogRecord
from studio.store.game_commands import GameCommands, TakenCommand
from studio.store.rounds import RoundIndex
from studio.store.stream_marks import StreamMarks

__all__ = [
    "ChainReport",
    "Checkpoints",
    "Database",
    "Entry",
    "EventLog",
    "GameCommands",
    "LogRecord",
    "RoundIndex",
    "StoredCheckpoint",
    "StreamMarks",
    "TakenCommand",
    "async_url",
    "safe_url",
]
