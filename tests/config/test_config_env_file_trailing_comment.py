"""`studio config check --env-file` warns about a comment after an unquoted value.

An operations review: ``STUDIO_WEB__PLATFORM_TOKEN=tok # the token`` is the 48-character
token ``tok # the token`` to systemd (a ``#`` starts a comment only at the start of a
line): long enough for the 32-character minimum, it passed the check without a word and
the platform was then answered 401. The quoted form was already warned about; the
warning names the line and the key, never the value (a secret)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config.cli import env_file_warnings, read_env_file

TOKEN = "S3CRET" * 6


def _warnings(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "secrets.env"
    path.write_text(text)
    path.chmod(0o600)
    return env_file_warnings(path)


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        (f"A=1\nSTUDIO_WEB__PLATFORM_TOKEN={TOKEN} # the token\n", 2, "STUDIO_WEB__PLATFORM_TOKEN"),
        (f"K={TOKEN}\t# a # b\n", 1, "K"),
        ("# a comment\n\nK= # nothing set yet\n", 3, "K"),
    ],
)
def test_a_comment_after_an_unquoted_value_is_warned_about_by_line_and_key(
    tmp_path: Path, text: str, line: int, key: str
) -> None:
    warnings = _warnings(tmp_path, text)
    assert len(warnings) == 1, warnings
    assert f"line {line}: {key}: the ' #...' after the value is part of it" in warnings[0]
    assert "S3CRET" not in warnings[0] and "token" not in warnings[0].split(key)[1]


@pytest.mark.parametrize(
    "text",
    [
        f"K={TOKEN}\n# the token\n",  # the comment on a line of its own
        "K=abc#def\n",  # a # inside a value is part of it, as meant
        "K='tok # kept'\n",  # quoted: meant
        "K=a\\ #b\n",  # an escaped space: meant
    ],
)
def test_no_warning_where_the_hash_is_meant(tmp_path: Path, text: str) -> None:
    assert _warnings(tmp_path, text) == []


def test_the_value_is_still_read_as_systemd_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "secrets.env"
    path.write_text("K=tok # the token\n")
    assert read_env_file(path) == {"K": "tok # the token"}


def test_config_check_prints_the_warning(tmp_path: Path) -> None:
    config = tmp_path / "studio.toml"
    config.write_text('[database]\nurl = "sqlite:///var/studio.db"\n')
    secrets = tmp_path / "secrets.env"
    secrets.write_text(f"STUDIO_WEB__PLATFORM_TOKEN={TOKEN} # the platform's token\n")
    secrets.chmod(0o600)
    result = CliRunner().invoke(
        app, ["config", "check", "--env-file", str(secrets), str(config)], catch_exceptions=False
    )
    assert "line 1: STUDIO_WEB__PLATFORM_TOKEN: the ' #...' after the value" in result.output
    assert "S3CRET" not in result.output
