from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config
from studio.errors import ConfigError

GOOD = """
log_level = "DEBUG"
[broker]
url = "mqtt://127.0.0.1:1883"
[database]
url = "sqlite:///var/x.db"
[[tables]]
id = "bj-1"
ruleset = "clubhouse"
[[tables.devices]]
id = "shoe-1"
kind = "shoe"
port = "socket://127.0.0.1:7000"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    return path


def test_defaults_need_no_file() -> None:
    config = load_config(None, environ={})
    assert config.broker.url is None  # embedded broker
    assert config.database.url.startswith("sqlite:///")
    assert config.web.port == 8000


def test_file_then_environment_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    config = load_config(
        path, environ={"STUDIO_BROKER__URL": "mqtt://10.0.0.5:1884", "STUDIO_WEB__PORT": "9000"}
    )
    assert config.broker.host == "10.0.0.5" and config.broker.port == 1884
    assert config.web.port == 9000
    assert config.table("bj-1").devices[0].kind == "shoe"
    assert config.log_level == "DEBUG"


def test_every_mistake_is_explained_with_its_location(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[broker]
url = "http://x"
[[tables]]
id = "bj 1"
[[tables.devices]]
id = "shoe-1"
kind = "scanner"
colour = "red"
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    lines = str(info.value).splitlines()
    assert any("broker.url" in line and "mqtt://" in line for line in lines)
    assert any("tables[0].id" in line for line in lines)
    assert any("tables[0].devices[0].kind" in line for line in lines)
    assert any("tables[0].devices[0].colour: unknown key" in line for line in lines)
    assert all(line.startswith(str(path)) for line in lines)


def test_a_table_s_camera_window_is_checked(tmp_path: Path) -> None:
    table = '[[tables]]\nid = "bj-1"\n'
    assert load_config(write(tmp_path, table), environ={}).table("bj-1").camera_window_seconds == 3
    config = load_config(write(tmp_path, table + "camera_window_seconds = 5.5\n"), environ={})
    assert config.table("bj-1").camera_window_seconds == 5.5
    for bad in ("0", "-1", "61", '"soon"'):
        with pytest.raises(ConfigError, match=r"tables\[0\]\.camera_window_seconds"):
            load_config(write(tmp_path, f"{table}camera_window_seconds = {bad}\n"), environ={})


def test_duplicate_ids_and_bad_toml(tmp_path: Path) -> None:
    dup = write(tmp_path, '[[tables]]\nid = "a"\n[[tables]]\nid = "a"\n')
    with pytest.raises(ConfigError, match="table ids must be unique: a"):
        load_config(dup, environ={})
    broken = tmp_path / "broken.toml"
    broken.write_text("[broker\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(broken, environ={})
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml", environ={})


def test_config_check_command(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["config", "check", str(write(tmp_path, GOOD))])
    assert ok.exit_code == 0 and "OK" in ok.output and "1 table(s)" in ok.output
    bad = tmp_path / "bad.toml"
    bad.write_text('[web]\nport = "eighty"\n')
    result = runner.invoke(app, ["config", "check", str(bad)])
    assert result.exit_code == 2
    assert "web.port" in result.output


def test_config_check_hides_the_database_password(tmp_path: Path) -> None:
    url = "postgresql://studio:S3cr3t-DB-pass@127.0.0.1:5432/studio"
    result = CliRunner().invoke(
        app, ["config", "check", str(write(tmp_path, GOOD))], env={"STUDIO_DATABASE__URL": url}
    )
    assert result.exit_code == 0, result.output
    assert "database postgresql://studio:***@127.0.0.1:5432/studio" in result.output
    assert "S3cr3t" not in result.output
