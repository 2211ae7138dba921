"""A SQLite database in memory keeps nothing past its process: `studio config check`
passed `sqlite:///:memory:` (and `sqlite:///`, no path) and `studio controller run` ran on
it, losing the event log and every round at its stop (a review). Both refuse it now; the
demo may still take one (tests/demo)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

CONFIG = """
[database]
url = "{url}"
[broker]
url = "mqtt://127.0.0.1:1883"
[[tables]]
id = "memt"
ruleset = "clubhouse"
"""


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite:///"])
def test_an_in_memory_database_is_refused_by_the_check_and_the_controller(
    tmp_path: Path, url: str
) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(CONFIG.format(url=url))
    runner = CliRunner()
    checked = runner.invoke(app, ["config", "check", str(path)])
    assert checked.exit_code == 2, checked.output
    assert "SQLite database in memory" in checked.output
    run = runner.invoke(app, ["controller", "run", "--config", str(path)])
    assert run.exit_code == 2, run.output
    assert "SQLite database in memory" in run.output


def test_a_database_file_is_taken(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(CONFIG.format(url=f"sqlite:///{tmp_path / 'studio.db'}"))
    checked = CliRunner().invoke(app, ["config", "check", str(path)])
    assert checked.exit_code == 0, checked.output
