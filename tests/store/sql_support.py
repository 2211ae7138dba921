"""A database changed by hand from a test, as an insider with SQL would (tests of the audit)."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa

from studio.store import Database


def run_sql(url: str, *statements: sa.Executable) -> None:
    """Run ``statements`` in one transaction on the database at ``url``."""

    async def run() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            for statement in statements:
                await conn.execute(statement)

    asyncio.run(run())
