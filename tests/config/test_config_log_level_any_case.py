"""`log_level` takes any case and CRITICAL, as `studio demo --log-level` does.

A new operator's review: the demo took `debug` and `critical`, the configuration refused
both (`STUDIO_LOG_LEVEL=debug`: "Input should be 'DEBUG', ...") and had no CRITICAL,
while docs/security.md showed `--log-level debug`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config.loader import load_config
from studio.errors import ConfigError


@pytest.mark.parametrize(
    ("given", "level"),
    [("debug", "DEBUG"), ("Info", "INFO"), ("CRITICAL", "CRITICAL"), ("critical", "CRITICAL")],
)
def test_the_environment_and_the_file_take_any_case(tmp_path: Path, given: str, level: str) -> None:
    assert load_config(None, {"STUDIO_LOG_LEVEL": given}).log_level == level
    path = tmp_path / "studio.toml"
    path.write_text(f'log_level = "{given}"\n')
    assert load_config(path, {}).log_level == level


def test_a_level_that_is_none_names_the_five() -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(None, {"STUDIO_LOG_LEVEL": "loud"})
    assert "'DEBUG', 'INFO', 'WARNING', 'ERROR' or 'CRITICAL'" in str(refused.value)


def test_the_demo_takes_the_same_levels(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--log-level", "loud", "--port", "1"])
    assert result.exit_code == 2
    assert "expected DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'loud'" in result.output
