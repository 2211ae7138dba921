"""``STUDIO_*`` variables over the file: what they may hold, and where a mistake is said to be."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.config import load_config
from studio.errors import ConfigError


def test_a_mistake_in_the_environment_names_the_variable_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text('[broker]\nurl = "mqtt://127.0.0.1:1883"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={"STUDIO_WEB__PORT": "80O0", "STUDIO_WEB__PROT": "9000"})
    lines = str(info.value).splitlines()
    assert any(line.startswith("STUDIO_WEB__PORT: web.port: ") for line in lines), lines
    assert any(line.startswith("STUDIO_WEB__PROT: web.prot: unknown key") for line in lines)
    assert not any(line.startswith(str(path)) for line in lines)


def test_a_section_check_failed_by_a_variable_names_it_beside_the_file(tmp_path: Path) -> None:
    # console's retention is checked against its lockout: the file set one, the
    # environment the other. Before, the line named the file alone.
    path = tmp_path / "studio.toml"
    path.write_text("[console]\nlockout_minutes = 15\n")
    environ = {"STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS": "0.001", "STUDIO_WEB__PORT": "9000"}
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=environ)
    assert (
        str(info.value)
        .splitlines()[-1]
        .startswith(
            f"{path} with STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS: console: attempts_kept_days (0.001 "
        )
    )
    with pytest.raises(ConfigError) as info:
        load_config(None, environ=environ)  # no file: the variable alone
    assert (
        str(info.value)
        .splitlines()[-1]
        .startswith("STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS: console: attempts_kept_days (0.001 ")
    )


def _lines(path: Path | None, environ: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=environ)
    return str(info.value).splitlines()


def test_a_section_check_names_only_the_variables_its_message_is_about(tmp_path: Path) -> None:
    # Found by review: any variable of the section was named, one unrelated to the mistake.
    path = tmp_path / "studio.toml"
    path.write_text("[console]\nlockout_minutes = 15\nattempts_kept_days = 0.001\n")
    [line] = _lines(path, {"STUDIO_CONSOLE__MAX_FAILURES": "7"})
    assert line.startswith(f"{path}: console: attempts_kept_days (0.001 days) must cover")
    path.write_text("[console]\nlockout_minutes = 15\n")
    environ = {"STUDIO_CONSOLE__MAX_FAILURES": "7", "STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS": "0.001"}
    [line] = _lines(path, environ)
    assert line.startswith(f"{path} with STUDIO_CONSOLE__ATTEMPTS_KEPT_DAYS: console: ")


def test_a_section_only_a_variable_made_names_the_variable_alone(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text('[broker]\nurl = "mqtt://127.0.0.1:1883"\n')
    [line] = _lines(path, {"STUDIO_WEBB__PORT": "9000"})
    assert line.startswith("STUDIO_WEBB__PORT: webb: unknown key (did you mean 'web'? the keys")
    assert line.endswith("; nested keys take a double underscore, e.g. STUDIO_BROKER__URL)")
    # A list item addressed by a variable: the list wants the whole JSON.
    path.write_text('[[tables]]\nid = "bj-1"\n')
    [line] = _lines(path, {"STUDIO_TABLES__0__RULESET": "vegas"})
    assert line.startswith("STUDIO_TABLES__0__RULESET: tables: Input should be a valid list: ")
    assert "as JSON in one variable" in line


def test_a_single_underscore_variable_is_pointed_at_the_double_one() -> None:
    with pytest.raises(ConfigError, match=r"STUDIO_BROKER_URL: broker_url: unknown key.*__"):
        load_config(None, environ={"STUDIO_BROKER_URL": "mqtt://127.0.0.1:1883"})


@pytest.mark.parametrize("secret", ["12345678901234567890", "true", "null", "1e400"])
def test_a_secret_from_the_environment_is_taken_as_text(secret: str) -> None:
    token = "1" * 40  # a platform token is at least 32 characters
    config = load_config(
        None, environ={"STUDIO_WEB__PLATFORM_TOKEN": token, "STUDIO_BROKER__PASSWORD": secret}
    )
    assert config.web.platform_token is not None and config.broker.password is not None
    assert config.web.platform_token.get_secret_value() == token
    assert config.broker.password.get_secret_value() == secret


def test_a_short_platform_token_is_refused_without_showing_it() -> None:
    """The token's failed attempts are not throttled: 8 characters could be guessed."""
    with pytest.raises(ConfigError, match="at least 32 characters") as caught:
        load_config(None, environ={"STUDIO_WEB__PLATFORM_TOKEN": "Hunter2!"})
    assert "Hunter2" not in str(caught.value)
    config = load_config(None, environ={"STUDIO_WEB__PLATFORM_TOKEN": "x" * 32})
    assert config.web.platform_token is not None


def test_numbers_switches_and_lists_from_the_environment_still_work() -> None:
    config = load_config(
        None,
        environ={
            "STUDIO_WEB__PORT": "9000",
            "STUDIO_WEB__SECURE_COOKIES": "true",
            "STUDIO_BROKER__KEEPALIVE": "30",
            "STUDIO_TABLES": '[{"id": "bj-9", "camera_window_seconds": 4.5}]',
        },
    )
    assert config.web.port == 9000 and config.web.secure_cookies is True
    assert config.broker.keepalive == 30
    assert config.table("bj-9").camera_window_seconds == 4.5


def test_a_list_from_the_environment_that_is_not_json_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"STUDIO_TABLES: not valid JSON"):
        load_config(None, environ={"STUDIO_TABLES": '[{"id": "bj-9",}]'})
