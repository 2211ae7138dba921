"""Database.create_all brings a database made by an older version up to the declared
indexes: ``metadata.create_all`` alone creates indexes only with their table."""

from __future__ import annotations

import sqlalchemy as sa

import studio.console  # noqa: F401  (registers the console's tables on the metadata)
from studio.console.users import login_attempts_table
from studio.store import Database
from studio.store.database import metadata


async def _index_names(database: Database, table: str) -> set[str]:
    async with database.engine.connect() as conn:
        indexes = await conn.run_sync(lambda sync: sa.inspect(sync).get_indexes(table))
    return {str(index["name"]) for index in indexes}


def _declared(table: sa.Table) -> set[str]:
    return {str(index.name) for index in table.indexes}


async def test_a_table_made_before_its_new_indexes_gets_them(database: Database) -> None:
    # login_attempts as it was made before its (remote, ts) and (username, id) indexes.
    old = sa.MetaData()
    sa.Table(
        "login_attempts",
        old,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", sa.String(40), nullable=False, index=True),
        sa.Column("username", sa.String(64), nullable=False, index=True),
        sa.Column("remote", sa.String(64), nullable=False, default=""),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("reason", sa.String(64), nullable=False, default=""),
    )
    async with database.engine.begin() as conn:
        await conn.run_sync(lambda sync: login_attempts_table.drop(sync))
        await conn.run_sync(old.create_all)
        await conn.execute(
            login_attempts_table.insert(),
            [
                {"ts": f"2026-01-01T00:00:{i:02d}", "username": "u", "remote": "r", "ok": False}
                for i in range(30)
            ],
        )
    before = await _index_names(database, "login_attempts")
    assert "ix_login_attempts_remote_ts" not in before
    await database.create_all()
    after = await _index_names(database, "login_attempts")
    assert after == before | {"ix_login_attempts_remote_ts", "ix_login_attempts_username_id"}
    await database.create_all()  # again: nothing to do, nothing fails
    assert await _index_names(database, "login_attempts") == after
    async with database.engine.connect() as conn:
        count = sa.select(sa.func.count()).select_from(login_attempts_table)
        assert (await conn.execute(count)).scalar_one() == 30


async def test_every_declared_index_dropped_is_made_again(database: Database) -> None:
    tables = [t for t in metadata.sorted_tables if t.indexes]
    assert login_attempts_table in tables
    async with database.engine.begin() as conn:
        for table in tables:
            for index in table.indexes:
                await conn.execute(sa.text(f'DROP INDEX "{index.name}"'))
    for table in tables:
        assert not _declared(table) & await _index_names(database, table.name)
    for _ in range(2):
        await database.create_all()
        for table in tables:
            assert _declared(table) <= await _index_names(database, table.name), table.name
