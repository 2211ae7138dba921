"""``[console]``: the console's security settings from the configuration file.

Before, `studio controller run` set only ``cookie_secure`` (from ``web.secure_cookies``):
sessions, lockout and the retention of login attempts kept the code's defaults, and the
per-address throttle was fixed at 50, whatever the studio's security officer wanted.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import ConsoleSecurity, load_config
from studio.console.auth import ConsoleSettings, settings_from_config
from studio.errors import ConfigError

POLICY = """\
[web]
secure_cookies = true

[console]
session_lifetime_hours = 8
idle_timeout_minutes = 30
max_failures = 3
lockout_minutes = 60
remote_max_failures = 20
attempts_kept_days = 365
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    return path


def check(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_the_file_sets_every_console_security_setting(tmp_path: Path) -> None:
    settings = settings_from_config(load_config(write(tmp_path, POLICY), environ={}))
    assert settings.cookie_secure is True
    assert settings.session_lifetime == timedelta(hours=8)
    assert settings.idle_timeout == timedelta(minutes=30)
    assert settings.max_failures == 3
    assert settings.lockout == timedelta(hours=1)
    assert settings.remote_max_failures == 20
    assert settings.attempts_kept == timedelta(days=365)


def test_without_a_console_section_the_settings_are_the_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, ""), environ={})
    assert settings_from_config(config) == ConsoleSettings()


def test_forever_keeps_the_login_attempts(tmp_path: Path) -> None:
    path = write(tmp_path, '[console]\nattempts_kept_days = "forever"\n')
    assert settings_from_config(load_config(path, environ={})).attempts_kept is None


def test_the_environment_sets_them_too(tmp_path: Path) -> None:
    environ = {
        "STUDIO_CONSOLE__REMOTE_MAX_FAILURES": "10",
        "STUDIO_CONSOLE__LOCKOUT_MINUTES": "2.5",
        "STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS": "forever",
    }
    settings = settings_from_config(load_config(write(tmp_path, ""), environ=environ))
    assert settings.remote_max_failures == 10
    assert settings.lockout == timedelta(minutes=2.5)
    assert settings.attempts_kept is None
    environ = {"STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS": "30"}
    settings = settings_from_config(load_config(write(tmp_path, ""), environ=environ))
    assert settings.attempts_kept == timedelta(days=30)


def test_check_accepts_the_policy(tmp_path: Path) -> None:
    code, output = check(write(tmp_path, POLICY))
    assert code == 0, output


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("max_failures = 0", "console.max_failures: Input should be greater than or equal to 1"),
        (
            "remote_max_failures = -1",
            "console.remote_max_failures: Input should be greater than or equal to 1",
        ),
        ("lockout_minutes = 0", "console.lockout_minutes: Input should be greater than 0"),
        (
            "session_lifetime_hours = -2",
            "console.session_lifetime_hours: Input should be greater than 0",
        ),
        (
            "idle_timeout_minutes = 0",
            "console.idle_timeout_minutes: Input should be greater than 0",
        ),
        (
            "attempts_kept_days = 0",
            "console.attempts_kept_days: a number of days (more than 0, at most 36600), or "
            '"forever" to keep them; got 0',
        ),
        (
            'attempts_kept_days = "never"',
            "console.attempts_kept_days: a number of days (more than 0, at most 36600), or "
            "\"forever\" to keep them; got 'never'",
        ),
        (
            "max_failures = 2.5",
            "console.max_failures: Input should be a valid integer, got a number with a "
            "fractional part",
        ),
        (
            "max_falures = 3",
            "console.max_falures: unknown key (did you mean 'max_failures'? the keys are "
            "session_lifetime_hours, idle_timeout_minutes, max_failures, lockout_minutes, "
            "remote_max_failures, attempts_kept_days; see docs/operations.md)",
        ),
        # A lock's end and a session's expiry are dates: a bound far from overflowing them.
        (
            "session_lifetime_hours = 1e12",
            "console.session_lifetime_hours: Input should be less than or equal to 8784",
        ),
    ],
)
def test_a_bad_value_is_one_clear_line_of_the_check(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write(tmp_path, f"[console]\n{line}\n")
    code, output = check(path)
    assert code == 2, output
    assert output.strip() == f"{path}: {message}"


def test_attempts_must_be_kept_through_the_lockout_window(tmp_path: Path) -> None:
    # 0.01 days is 14.4 minutes: the per-address count of a 15-minute window needs more.
    path = write(tmp_path, "[console]\nattempts_kept_days = 0.01\n")
    code, output = check(path)
    assert code == 2, output
    assert output.strip() == (
        f"{path}: console: attempts_kept_days (0.01 days) must cover lockout_minutes (15): "
        "the per-address throttle counts the failed logins within the lockout window"
    )
    with pytest.raises(ConfigError):
        load_config(path, environ={})
    ok = write(tmp_path, "[console]\nattempts_kept_days = 0.01\nlockout_minutes = 14\n")
    assert load_config(ok, environ={}).console.attempts_kept_days == 0.01


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("doc", ["security.md", "operations.md"])
def test_the_documented_console_section_is_the_defaults(tmp_path: Path, doc: str) -> None:
    # The docs show [console] with every key at its default: copied, it changes nothing.
    sections = [
        block
        for block in re.findall(r"```toml\n(.*?)```", (DOCS / doc).read_text(), re.S)
        if "[console]" in block
    ]
    assert sections, f"{doc} shows no [console] section"
    section = sections[0][sections[0].index("[console]") :].split("\n[", 1)[0]
    config = load_config(write(tmp_path, section), environ={})
    assert config.console.model_fields_set == set(ConsoleSecurity.model_fields)
    assert settings_from_config(config) == ConsoleSettings()
