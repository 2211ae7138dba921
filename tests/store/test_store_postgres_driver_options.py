"""PostgreSQL URL options of SQLAlchemy's asyncpg dialect and of asyncpg (a review).

Translating libpq's options refused every option not on its list: ``?port=5432``
(with ``host=/var/run/postgresql`` too), the dialect's two multi-host formats
(``host=h1:5432&host=h2:5432``, ``host=h1,h2&port=5432,5432``),
``prepared_statement_cache_size=0`` (PgBouncer in transaction mode) and
``command_timeout=30``, all of which opened before. They are taken again; only a name
neither libpq, the dialect nor asyncpg knows is refused.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from postgres_support import POSTGRES_URL, require_postgres
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store.database import Database, url_problem

BASE = "postgresql://studio@/studio"
TAKEN = [
    "port=5432",
    "host=/var/run/postgresql&port=5433",
    "host=h1:5432&host=h2:5432",
    "host=h1,h2&port=5432,5432",
    "prepared_statement_cache_size=0",
    "command_timeout=30",
    "statement_cache_size=0",
    "host=/var/run/postgresql&sslmode=disable&application_name=studio",
]


@pytest.mark.parametrize("query", TAKEN)
def test_the_dialect_and_asyncpg_options_are_taken(query: str) -> None:
    assert url_problem(f"{BASE}?{query}") is None


@pytest.mark.parametrize("query", TAKEN)
def test_config_check_passes_them(tmp_path: Path, query: str) -> None:
    path = tmp_path / "studio.toml"
    path.write_text('[broker]\nurl = "mqtt://127.0.0.1:1883"\n[[tables]]\nid = "bj-1"\n')
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    env["STUDIO_DATABASE__URL"] = f"{BASE}?{query}"
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=env)
    assert result.exit_code == 0, result.output
    assert "database url has" not in result.output


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("foo=1", "has the option 'foo', not supported"),
        ("server_settings=x", "a URL cannot give a mapping"),
        ("port=fivefourthreetwo", "has a bad host, port or prepared_statement_cache_size"),
        ("host=h1:5432&host=h2:5432&port=5432", "Can't mix 'multihost' formats"),
        ("prepared_statement_cache_size=none", "has a bad host, port or prepared_statement"),
        ("command_timeout=0", "has a bad command_timeout: a number of seconds > 0"),
        ("statement_cache_size=-1", "has a bad statement_cache_size: a whole number"),
        ("connect_timeout=5&timeout=5", "has both connect_timeout and timeout"),
        ("command_timeout=1&command_timeout=2", "gives the option 'command_timeout' more"),
    ],
)
def test_an_option_no_driver_takes_is_refused(query: str, words: str) -> None:
    problem = url_problem(f"{BASE}?{query}")
    assert problem is not None and words in problem, problem
    with pytest.raises(StoreError, match="database url postgresql://studio@/studio"):
        Database(f"{BASE}?{query}")


def _url(netloc: str, query: str) -> str:
    real = make_url(POSTGRES_URL)
    return f"postgresql://{real.username}@{netloc}/{real.database}?{query}"


@pytest.fixture
def postgres() -> None:
    require_postgres()


def _real() -> tuple[str, int]:
    real = make_url(POSTGRES_URL)
    return real.host or "127.0.0.1", real.port or 5432


@pytest.mark.parametrize(
    "make",
    [
        lambda h, p: _url(h, f"port={p}"),
        lambda h, p: _url("", f"host={h}&port={p}"),
        lambda h, p: _url(f"{h}:{p}", "prepared_statement_cache_size=0"),
        lambda h, p: _url(f"{h}:{p}", "command_timeout=30&statement_cache_size=0"),
        # The first host refuses: asyncpg tries the next.
        lambda h, p: _url("", f"host={h}:1&host={h}:{p}"),
        lambda h, p: _url("", f"host={h},{h}&port=1,{p}"),
    ],
)
async def test_postgres_opens_with_them(postgres: None, make: object) -> None:
    assert callable(make)
    url = make(*_real())
    schema = f"t_{uuid.uuid4().hex[:12]}"
    db = Database(url, schema=schema)
    try:
        await db.create_all()
        async with db.engine.connect() as conn:
            assert (await conn.execute(sa.select(sa.literal(1)))).scalar_one() == 1
    finally:
        async with db.engine.begin() as conn:
            await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await db.close()
