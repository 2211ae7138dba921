"""`studio config check --env-file` reads the EnvironmentFile as systemd does
(src/basic/env-file.c): before, ``K="tok" # c`` kept its quotes (systemd: ``tok# c``),
``\\$`` and ``\\``` in double quotes kept their backslash, a line ending in a backslash
(joined to the next by systemd) and ``export K=V`` (ignored by systemd) were refused alike
as "not a KEY=VALUE line"."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.config.cli import env_file_warnings, read_env_file
from studio.errors import ConfigError


def _read(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "secrets.env"
    path.write_text(text)
    return read_env_file(path)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('K="tok" # c\n', "tok# c"),
        ('K="a\\$b\\`c\\"d\\\\e\\nf"\n', 'a$b`c"d\\e\\nf'),
        ("K='a\\$b # c'\n", "a\\$b # c"),
        ("K=abc\\\n  more\n", "abc  more"),
        ('K="one\\\ntwo"\n', "onetwo"),
        ('K="line1\nline2"\n', "line1\nline2"),
        ("K=  spaced  value  \n", "spaced  value"),
        ("K=a\\ \\\\b\n", "a \\b"),
        ("K=abc#def\n", "abc#def"),
        ("K=1\r\n", "1"),
        ("K=\n", ""),
    ],
)
def test_values_are_read_as_systemd_reads_them(tmp_path: Path, text: str, value: str) -> None:
    assert _read(tmp_path, text)["K"] == value


def test_comments_and_continued_lines_keep_their_neighbours(tmp_path: Path) -> None:
    text = "# a comment\n; another\nA=1\nB=two\\\n three\n  C = 3\n"
    assert _read(tmp_path, text) == {"A": "1", "B": "two three", "C": "3"}


def test_text_after_a_closing_quote_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "secrets.env"
    path.write_text('A=1\nK="S3CRET" # the token\n')
    path.chmod(0o600)
    warnings = env_file_warnings(path)
    assert len(warnings) == 1 and "line 2: the text after the closing quote" in warnings[0]
    assert "S3CRET" not in warnings[0]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("export K=S3CRET\n", "line 1: 'export' is not taken (systemd ignores the line)"),
        ("A=1\nS3CRET\n", "line 2: not a KEY=VALUE line"),
        ("\ufeffK=S3CRET\n", "line 1 begins with a byte-order mark"),
    ],
)
def test_a_line_systemd_ignores_is_refused_by_number(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _read(tmp_path, text)
    assert words in str(caught.value) and "S3CRET" not in str(caught.value)
