"""`studio audit verify` of a database that holds no studio audit log: it cannot check anything.

Before, it created the studio's tables in it (a PostgreSQL database, or a SQLite file of
another program) and reported their empty chains OK with exit status 0: a URL naming the
wrong database passed the audit, and changed that database. A studio's database whose
log is still empty (a studio freshly started) verifies as before.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from postgres_support import fresh_database, table_names
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog

runner = CliRunner()


@pytest.fixture
async def empty_postgres() -> AsyncIterator[str]:
    async with fresh_database() as url:
        yield url


def verify(url: str, *options: str) -> tuple[int, str]:
    result = runner.invoke(app, ["audit", "verify", "--database", url, *options])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def sqlite_tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    return names


def test_a_postgresql_database_without_the_log_is_refused_and_left_alone(
    empty_postgres: str, tmp_path: Path
) -> None:
    anchors = tmp_path / "anchors"
    code, output = verify(empty_postgres, "--anchor-file", str(anchors))
    assert code == 2, output
    assert output.strip() == (
        f"error: database {empty_postgres} holds no studio audit log (no event_log table): "
        "nothing to verify"
    )
    assert asyncio.run(table_names(empty_postgres)) == set()
    assert not anchors.exists()


def test_a_sqlite_file_without_the_log_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    conn.close()
    code, output = verify(f"sqlite:///{db}")
    assert code == 2, output
    assert output.strip() == (
        f"error: database sqlite:///{db} holds no studio audit log (no event_log table): "
        "nothing to verify"
    )
    assert sqlite_tables(db) == {"notes"}


def test_an_empty_sqlite_file_is_refused_and_left_empty(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    db.touch()
    code, output = verify(f"sqlite:///{db}")
    assert code == 2, output
    assert "holds no studio audit log" in output
    assert sqlite_tables(db) == set()


def test_a_database_lacking_one_of_the_audited_tables_is_refused(empty_postgres: str) -> None:
    async def studio_without_admin_log() -> None:
        async with Database(empty_postgres) as db:
            await EventLog(db).append("t1", "x", {"i": 1})
            async with db.engine.begin() as conn:
                await conn.execute(sa.text("DROP TABLE admin_log"))

    asyncio.run(studio_without_admin_log())
    code, output = verify(empty_postgres)
    assert code == 2, output
    assert output.strip().startswith(
        f"error: database {empty_postgres} has no admin_log table: made by an older version?"
    )
    assert "admin_log" not in asyncio.run(table_names(empty_postgres))


def _freshly_started(url: str) -> None:
    async def start() -> None:
        async with Database(url):
            pass  # what every studio process does at its start: the tables, no record

    asyncio.run(start())


def test_a_freshly_started_studio_on_postgresql_verifies_as_before(empty_postgres: str) -> None:
    _freshly_started(empty_postgres)
    code, output = verify(empty_postgres)
    assert code == 0, output
    assert "chain OK: 0 records" in output
    assert "admin log OK: 0 records" in output


def test_a_freshly_started_studio_on_sqlite_verifies_as_before(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    _freshly_started(url)
    code, output = verify(url)
    assert code == 0, output
    assert "chain OK: 0 records" in output
    assert "round index OK: 0 rounds" in output
