"""Durable, hash-chained event log (SQLite by default, PostgreSQL by URL)."""

from studio.store.checkpoints import Checkpoints, StoredCheckpoint
from studio.store.database import Database, async_url, safe_url
from studio.store.eventlog import ChainReport, Entry, EventLog, LogRecord
from studio.store.rounds import RoundIndex
from studio.store.stream_marks import StreamMarks

__all__ = [
    "ChainReport",
    "Checkpoints",
    "Database",
    "Entry",
    "EventLog",
    "LogRecord",
    "RoundIndex",
    "StoredCheckpoint",
    "StreamMarks",
    "async_url",
    "safe_url",
]
