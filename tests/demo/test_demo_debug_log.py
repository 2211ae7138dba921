"""`studio demo --log-level debug` keeps the database library's statements out of the log:
the demo's SQLite log takes the manager's password (an argon2 hash) and console sessions,
and aiosqlite logs every statement with its parameters at DEBUG (a review found hashes and
CSRF tokens in a controller's DEBUG log; the demo set up its logging on its own)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.demo import cli as demo_cli
from studio.process import OWN_LOGGERS, QUIET_LOGGERS

SECRET = "$argon2id$v=19$m=65536,t=3,p=4$c2VjcmV0$not-a-real-hash"


@pytest.fixture
def library_levels() -> Iterator[None]:
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS + OWN_LOGGERS}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def test_a_debug_demo_logs_no_statement_parameters(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    library_levels: None,
) -> None:
    async def a_demo_writing_a_hash(options: Any, external: Any, signals: Any) -> dict[str, Any]:
        logging.getLogger("studio.demo").debug("the demo's own debug line")
        async with aiosqlite.connect(tmp_path / "demo.db") as db:
            await db.execute("CREATE TABLE users (name TEXT, hash TEXT)")
            await db.execute("INSERT INTO users VALUES (?, ?)", ("manager", SECRET))
            await db.commit()
        return {"rounds": {"t1": 0}}

    monkeypatch.setattr(demo_cli, "_play", a_demo_writing_a_hash)
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(
        app, ["demo", "--log-level", "debug", "--database", f"sqlite:///{tmp_path / 'demo.db'}"]
    )
    assert result.exit_code == 0, result.output
    assert "the demo's own debug line" in caplog.text  # DEBUG is on for the studio's loggers
    assert "argon2" not in caplog.text
    assert "INSERT INTO users" not in caplog.text
