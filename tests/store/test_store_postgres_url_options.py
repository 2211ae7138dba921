"""libpq's URL options on PostgreSQL, and the SQLite file's mode (a review).

``?sslmode=require``, ``connect_timeout``, ``application_name`` and ``sslpassword`` passed
`studio config check`, then every command that opened the database ended in
``TypeError: connect() got an unexpected keyword argument 'sslmode'``: SQLAlchemy's
asyncpg dialect gives each query option to ``asyncpg.connect`` as a keyword. They are
translated now, and an option no driver takes is refused, naming those that are.
The SQLite database (password hashes, session tokens) was created 0644.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from postgres_support import POSTGRES_URL, require_postgres
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store.database import Database, safe_url, url_problem

BASE = "postgresql://studio@db.example/studio"


@pytest.mark.parametrize(
    "query",
    [
        "sslmode=require",
        "sslmode=verify-full&sslrootcert=/etc/studio/pg-ca.pem",
        "sslmode=require&sslcert=c.pem&sslkey=k.pem&sslpassword=S3cret",
        "connect_timeout=5",
        "application_name=studio-controller",
        "ssl=require",
        "host=/var/run/postgresql",
    ],
)
def test_the_common_libpq_options_are_taken(query: str) -> None:
    assert url_problem(f"{BASE}?{query}") is None


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("sslmod=require", "has the option 'sslmod', not supported: a PostgreSQL URL takes"),
        ("sslmode=required", "has a bad sslmode: it takes disable, allow, prefer, require"),
        ("ssl=true", "has a bad ssl: it takes disable"),
        ("sslmode=require&ssl=require", "has both sslmode and ssl"),
        ("sslmode=require&sslmode=disable", "gives the option 'sslmode' more than once"),
        ("connect_timeout=0", "has a bad connect_timeout: a number of seconds > 0"),
        ("connect_timeout=soon", "has a bad connect_timeout"),
    ],
)
def test_an_option_the_driver_cannot_take_is_refused_in_words(query: str, words: str) -> None:
    problem = url_problem(f"{BASE}?{query}")
    assert problem is not None and words in problem, problem
    with pytest.raises(StoreError, match=r"database url postgresql://studio@db\.example/studio"):
        Database(f"{BASE}?{query}")


@pytest.mark.parametrize(
    ("url", "port"),
    [
        ("postgresql://studio@db.example:99999/studio", 99999),  # 5432 and one key too many
        (f"{BASE}?port=99999", 99999),
        ("postgresql://studio@/studio?host=a:5432&host=b:70000", 70000),
        ("postgresql://studio@/studio?host=a,b&port=5432,70000", 70000),
        ("postgresql://studio@db.example:0/studio", 0),  # was taken for no port: 5432
        ("postgresql://studio@/studio?host=a:0", 0),
    ],
)
def test_a_port_outside_1_to_65535_is_refused(url: str, port: int, tmp_path: Path) -> None:
    """It passed `config check`, then each command that opened the database ended in a
    traceback (OverflowError: connect(): port must be 0-65535), exit 1."""
    words = f"has a bad port {port}: a port is 1 to 65535"
    assert url_problem(url) == words
    config = tmp_path / "studio.toml"
    config.write_text(f'[[tables]]\nid = "bj-1"\n[database]\nurl = "{url}"\n')
    checked = CliRunner().invoke(app, ["config", "check", str(config)])
    assert checked.exit_code == 2, checked.output  # 0: OK
    assert f"database.url: database url {words}" in checked.stderr, checked.stderr
    listed = CliRunner().invoke(app, ["users", "list", "--database", url])
    assert listed.exit_code == 2, listed.output  # 1, a traceback
    assert listed.stderr == f"error: database url {safe_url(url)} {words}\n", listed.stderr


def test_the_ports_of_a_url_that_are_ports_are_taken() -> None:
    for url in (
        "postgresql://studio@db.example:65535/studio",
        f"{BASE}?port=1",
        "postgresql://studio@/studio?host=a:5432&host=b:5433",
        "postgresql://studio@/studio?host=/var/run/postgresql&port=5433",
    ):
        assert url_problem(url) is None, url


def test_a_secret_option_is_never_in_the_refusal() -> None:
    problem = url_problem(f"{BASE}?sslpassword=Hunter2&sslpassword=Hunter3")
    assert problem is not None and "Hunter" not in problem


def test_sqlite_urls_keep_their_options() -> None:
    assert url_problem("sqlite:///var/studio.db?timeout=5") is None


@pytest.fixture
def postgres() -> str:
    require_postgres()
    return POSTGRES_URL


@pytest.mark.parametrize(
    "query",
    ["sslmode=disable", "sslmode=prefer", "connect_timeout=5&application_name=studio-opts"],
)
async def test_postgres_connects_with_the_options(postgres: str, query: str) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    db = Database(f"{postgres}?{query}", schema=schema)
    try:
        await db.create_all()
        async with db.engine.connect() as conn:
            name, path = (
                await conn.execute(
                    sa.select(
                        sa.func.current_setting("application_name"),
                        sa.func.current_setting("search_path"),
                    )
                )
            ).one()
        assert path == schema  # the schema's setting is kept beside application_name
        if "application_name" in query:
            assert name == "studio-opts"
    finally:
        async with db.engine.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await db.close()


async def test_sslmode_require_connects_or_says_why(postgres: str) -> None:
    # The shared server may have no TLS: then a StoreError naming it, never a TypeError.
    db = Database(f"{postgres}?sslmode=require&sslpassword=Hunter2")
    try:
        await db.table_names()
    except StoreError as exc:
        assert "cannot open database" in str(exc)
        assert "sslpassword=***" in str(exc) and "Hunter2" not in str(exc)
    finally:
        await db.close()


async def test_a_new_sqlite_database_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    path = tmp_path / "var" / "studio.db"
    async with Database(f"sqlite:///{path}"):
        pass
    made = [path, *(p for p in path.parent.iterdir() if p.name.startswith("studio.db-"))]
    for file in made:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


async def test_an_existing_sqlite_database_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "studio.db"
    path.touch(mode=0o640)
    os.chmod(path, 0o640)
    async with Database(f"sqlite:///{path}"):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
