"""Three things `studio config check` passed without a word (an operations review): a
broker password with no user name (MQTT sends a password only with a user name: it was
never sent), a variable named like a setting in lower case (``studio_web__port``: read by
no process, while ``STUDIO_WEB__port`` is), and a number written as text in the file
(``max_failures = "5"``: converted, as every variable's text is, and said so in
docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config

TABLE = '[[tables]]\nid = "bj-1"\n'


def _check(tmp_path: Path, text: str, env: dict[str, str]) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text(TABLE + text)
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_a_broker_password_without_a_user_name_is_warned_about(tmp_path: Path) -> None:
    broker = '[broker]\nurl = "mqtts://127.0.0.1:8883"\n'
    code, output = _check(tmp_path, broker, {"STUDIO_BROKER__PASSWORD": "S3cret-pw"})
    assert code == 0, output
    assert "broker.password (STUDIO_BROKER__PASSWORD) is set but no broker.username" in output
    assert "S3cret" not in output
    code, output = _check(
        tmp_path, broker + 'username = "ctl"\n', {"STUDIO_BROKER__PASSWORD": "S3cret-pw"}
    )
    assert code == 0 and "no broker.username" not in output, output


def test_a_variable_in_lower_case_is_warned_about_by_name(tmp_path: Path) -> None:
    env = {"studio_web__port": "9000", "Studio_Web__Host": "S3cret", "STUDIO_WEB__port": "9001"}
    code, output = _check(tmp_path, "", env)
    assert code == 0, output
    assert "the variable studio_web__port is not read" in output
    assert "(STUDIO_WEB__PORT)" in output
    assert "the variable Studio_Web__Host is not read" in output
    assert "STUDIO_WEB__port is not read" not in output
    assert "S3cret" not in output
    path = tmp_path / "studio.toml"
    assert load_config(path, environ=env).web.port == 9001  # as written, in any case after it


def test_a_number_written_as_text_in_the_file_is_the_number(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(TABLE + '[console]\nmax_failures = "5"\n')
    assert load_config(path, environ={}).console.max_failures == 5
    path.write_text(TABLE + '[console]\nmax_failures = "five"\n')
    code, output = _check(tmp_path, '[console]\nmax_failures = "five"\n', {})
    assert code == 2 and "console.max_failures" in output, output
