"""``studio drivers run`` and ``studio camera run`` with a ``--table`` the config does not
have: refused (exit 2), naming it and the config's tables, before anything starts.

Before, a typo beside a valid table was dropped without a word (that table's devices
undriven, a clean start log: ``driving 1 devices``), and alone it read "no shoe, shuffler
or cutcard device in the config" / "no camera device in the config"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

# Nothing listens on the broker's port, and the devices' ports are not there: a run that
# started would connect for ever (the test's timeout), not drive anything.
CONFIG = """\
[broker]
url = "mqtt://127.0.0.1:9"

[[tables]]
id = "bj-1"
devices = [{ id = "shoe-1", kind = "shoe", port = "/nonexistent/shoe-1" }]

[[tables]]
id = "bj-2"
devices = [{ id = "shoe-1", kind = "shoe", port = "/nonexistent/shoe-2" }]
"""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("command", ["drivers", "camera"])
@pytest.mark.parametrize(
    ("tables", "said"),
    [
        (["bj-9"], "no table 'bj-9'"),
        (["bj-1", "bj-2x"], "no table 'bj-2x'"),
        (["bj-x", "bj-1", "bj-y", "bj-x"], "no tables 'bj-x', 'bj-y'"),
    ],
)
def test_a_table_not_in_the_config_is_refused_naming_the_tables(
    tmp_path: Path, command: str, tables: list[str], said: str
) -> None:
    config = tmp_path / "studio.toml"
    config.write_text(CONFIG)
    asked = [arg for table in tables for arg in ("-t", table)]
    state = tmp_path / "state"
    result = CliRunner().invoke(
        app,
        [command, "run", "--config", str(config), *asked, "--state-dir", str(state)],
        env={},
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {said} in {config} (tables: bj-1, bj-2)"
    assert not state.exists()  # nothing started
