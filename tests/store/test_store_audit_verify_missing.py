"""`studio audit verify` of a SQLite database that is not there: it cannot check anything.

Before, it created an empty database (and its missing directories) and reported the
empty chains OK with exit status 0: a typo in the path passed the audit, and a first run
with --anchor-file recorded the empty log's heads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog

runner = CliRunner()


def test_a_missing_file_is_refused_and_not_created(tmp_path: Path) -> None:
    db = tmp_path / "typo" / "studio.db"
    anchors = tmp_path / "anchors"
    result = runner.invoke(
        app,
        ["audit", "verify", "--database", f"sqlite:///{db}", "--anchor-file", str(anchors)],
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: no database at {db}: nothing to verify"
    assert not db.parent.exists()
    assert not anchors.exists()


def test_a_relative_path_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["audit", "verify", "--database", "sqlite:///var/studio.db"])
    assert result.exit_code == 2, result.output
    assert "no database at var/studio.db" in result.output
    assert not (tmp_path / "var").exists()


def test_a_missing_file_from_the_configuration_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    config = tmp_path / "studio.toml"
    config.write_text(f'[database]\nurl = "sqlite:///{db}"\n')
    result = runner.invoke(app, ["audit", "verify", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert f"no database at {db}" in result.output
    assert not db.exists()


def test_an_in_memory_database_is_refused() -> None:
    result = runner.invoke(app, ["audit", "verify", "--database", "sqlite:///:memory:"])
    assert result.exit_code == 2, result.output
    assert "in-memory database" in result.output


def test_an_existing_database_is_verified(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def append() -> None:
        async with Database(url) as db:
            await EventLog(db).append("t1", "x", {"i": 1})

    asyncio.run(append())
    result = runner.invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 0, result.output
    assert "chain OK: 1 records" in result.output
