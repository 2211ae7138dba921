"""``studio audit verify`` opens a SQLite file read-only: the file audited is left byte for
byte as it was (a backup's checksum, kept for its chain of custody, still holds), and a
read-only copy can be audited. Until 2026-12-05 it opened it as the controller does:
``PRAGMA journal_mode=WAL`` turned a backup in ``delete`` journal mode into WAL."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from studio_run import two_rounds
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.store.rounds import rounds


def _backup(folder: Path) -> Path:
    """A played database, in ``delete`` journal mode (as ``sqlite3 .backup`` may leave one)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "backup.db"

    async def play() -> None:
        async with Database(f"sqlite:///{path}") as db:
            await two_rounds(db)

    asyncio.run(play())
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    conn.close()
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("folder", ["plain", "a folder #1"])
def test_verify_leaves_the_file_as_it_was(tmp_path: Path, folder: str) -> None:
    path = _backup(tmp_path / folder)
    before = _sha256(path)
    result = CliRunner().invoke(app, ["audit", "verify", "--database", f"sqlite:///{path}"])
    assert result.exit_code == 0, result.output
    assert "chain OK" in result.output
    assert _sha256(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["backup.db"]  # no -wal, -shm
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    conn.close()


def test_a_read_only_database_refuses_writes(tmp_path: Path) -> None:
    path = _backup(tmp_path)

    async def write() -> None:
        db = Database(f"sqlite:///{path}", read_only=True)
        try:
            async with db.engine.begin() as conn:
                await conn.execute(sa.delete(rounds))
        finally:
            await db.close()

    with pytest.raises(sa.exc.OperationalError, match="readonly"):
        asyncio.run(write())
