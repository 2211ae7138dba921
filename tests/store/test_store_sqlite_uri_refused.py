"""A SQLite URI file name (``sqlite:///file:studio.db?mode=rwc&uri=true``) is refused.

It defeated the 0600 protection: the studio created an empty 0600 file literally named
``file:studio.db`` (and locked it) while SQLite opened ``studio.db``, made 0644; `studio
config check` named the stray file as the database.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store.database import Database, url_problem

URLS = ["sqlite:///file:uri.db?mode=rwc&uri=true", "sqlite:///uri.db?uri=true"]


@pytest.mark.parametrize("url", URLS)
def test_a_sqlite_uri_file_name_is_refused(url: str) -> None:
    problem = url_problem(url)
    assert problem is not None and "has the option 'uri', not supported" in problem


@pytest.mark.parametrize("url", URLS)
def test_the_database_refuses_it_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="'uri', not supported"):
        Database(url)
    assert list(tmp_path.iterdir()) == []


def test_config_check_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(
        '[broker]\nurl = "mqtt://127.0.0.1:1883"\n[database]\n'
        f'url = "sqlite:///{tmp_path}/file:uri.db?mode=rwc&uri=true"\n[[tables]]\nid = "bj-1"\n'
    )
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=env)
    assert result.exit_code == 2, result.output
    assert "'uri', not supported" in result.output
