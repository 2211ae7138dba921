"""``studio users`` on a database that holds no users: refused, nothing created.

Before, `studio users list` on a missing SQLite file created it (and its directories) and
listed nothing; every command on a PostgreSQL database (or a SQLite file) without the
studio's tables created them all, then listed nothing or failed with "no user". Only
`studio users add` may make a studio database of it (the first admin).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from postgres_support import fresh_database, table_names
from typer.testing import CliRunner

from studio.cli import app

runner = CliRunner()

COMMANDS = [
    (
        ["list"],
        "no users yet (studio users add NAME --role admin --reason 'first admin' creates the first)",
    ),
    (["set-role", "--reason", "a test of it", "dana", "manager"], "no users to change"),
    (["passwd", "--reason", "a test of it", "dana", "--password-stdin"], "no users to change"),
    (["unlock", "--reason", "a test of it", "dana"], "no users to change"),
    (["disable", "--reason", "a test of it", "dana"], "no users to change"),
    (["enable", "--reason", "a test of it", "dana"], "no users to change"),
]
IDS = [command[0] for command, _ in COMMANDS]


@pytest.fixture
async def empty_postgres() -> AsyncIterator[str]:
    async with fresh_database() as url:
        yield url


def users(command: list[str], url: str) -> tuple[int, str]:
    result = runner.invoke(app, ["users", *command, "--database", url], input="a long password\n")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_listing_a_missing_sqlite_database_is_refused_without_creating_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "missing" / "studio.db"
    code, output = users(["list"], f"sqlite:///{db}")
    assert code == 2, output
    assert output.strip() == (
        f"error: no database at {db}: no users yet "
        "(studio users add NAME --role admin --reason 'first admin' creates the first)"
    )
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(("command", "why"), COMMANDS, ids=IDS)
def test_a_sqlite_file_without_users_is_refused_and_left_alone(
    tmp_path: Path, command: list[str], why: str
) -> None:
    # Another program's database, or a wrong path to one: not made a studio's.
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
    conn.close()
    code, output = users(command, f"sqlite:///{db}")
    assert code == 2, output
    assert output.strip() == f"error: database sqlite:///{db} has no console users: {why}"
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert tables == {"notes"}


@pytest.mark.parametrize(("command", "why"), COMMANDS, ids=IDS)
def test_a_postgresql_database_without_users_is_refused_and_left_alone(
    empty_postgres: str, command: list[str], why: str
) -> None:
    code, output = users(command, empty_postgres)
    assert code == 2, output
    assert output.strip() == f"error: database {empty_postgres} has no console users: {why}"
    assert asyncio.run(table_names(empty_postgres)) == set()


def test_add_still_makes_the_first_admin_in_an_empty_postgresql_database(
    empty_postgres: str,
) -> None:
    code, output = users(
        ["add", "--reason", "a test of it", "chief", "--role", "admin", "--password-stdin"],
        empty_postgres,
    )
    assert code == 0, output
    code, output = users(["list"], empty_postgres)
    assert code == 0, output
    assert output.startswith("chief ")
    code, output = users(["unlock", "--reason", "a test of it", "chief"], empty_postgres)
    assert code == 0, output
    assert output.strip() == "chief unlocked"


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite:///"])
@pytest.mark.parametrize(
    "command",
    [["add", "--reason", "a test of it", "dana", "--role", "manager", "--password-stdin"]],
)
def test_an_in_memory_database_is_refused(url: str, command: list[str]) -> None:
    # Before: "added dana (manager)", exit 0, to a database gone when the command ended.
    code, output = users(command, url)
    assert code == 2, output
    assert "is a SQLite database in memory: users added or changed there are gone" in output
    assert "added" not in output.split("error:")[0]
