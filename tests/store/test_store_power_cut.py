"""What a power cut (not only a killed process) may take: on SQLite in WAL mode,
``synchronous=NORMAL`` can roll back the last commits after an OS crash or a power cut,
and the controller publishes a settlement once it is committed: a crash-consistency
review found it. Every connection now syncs each commit (FULL)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from studio.store import Database

FULL = 2  # PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA


async def test_every_sqlite_connection_syncs_each_commit(tmp_path: Path) -> None:
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        await db.create_all()
        for _ in range(2):  # the pool's connections alike
            async with db.engine.connect() as conn:
                assert (await conn.execute(sa.text("PRAGMA synchronous"))).scalar() == FULL
                mode = (await conn.execute(sa.text("PRAGMA journal_mode"))).scalar()
                assert mode == "wal"
