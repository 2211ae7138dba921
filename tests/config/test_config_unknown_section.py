"""A misspelt table header (``[[table]]``, ``[brokr]``, ``[[tables.devcies]]``) is named with
its line and the header meant. Until 2026-12-07 ``[[table]]`` before a ``[[tables]]`` was
"not valid TOML: Cannot overwrite a value" at the later, correct header's line, and after
one it moved its devices onto the table before (``device ids must be unique`` of a table
that was fine; an operator's review)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config
from studio.errors import ConfigError

BROKER = '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'


def table(header: str, table_id: str) -> str:
    return (
        f'{header}\nid = "{table_id}"\nsingle_source = true\n'
        f'[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "socket://127.0.0.1:7001"\n'
    )


def refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_config(path, environ={})
    return str(error.value)


TABLES = "(sections: [broker], [database], [web], [console], [controller], [[tables]])"


def test_a_misspelt_first_table_is_named_not_the_toml_error_elsewhere(tmp_path: Path) -> None:
    said = refused(tmp_path, BROKER + table("[[table]]", "a") + table("[[tables]]", "b"))
    assert said.startswith(
        f"{tmp_path / 'studio.toml'}: unknown section [[table]] at line 3: did you mean "
        f"[[tables]]? {TABLES}; the TOML reader then stopped: Cannot overwrite a value"
    ), said


def test_a_misspelt_second_table_is_named_not_the_first_table(tmp_path: Path) -> None:
    said = refused(tmp_path, BROKER + table("[[tables]]", "a") + table("[[table]]", "b"))
    assert said == (
        f"{tmp_path / 'studio.toml'}: unknown section [[table]] at line 10: did you mean "
        f"[[tables]]? {TABLES}"
    ), said
    assert "unique" not in said


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[brokr]\n", "unknown section [brokr] at line 1: did you mean [broker]?"),
        (
            '[[tables]]\nid = "a"\n[[tables.devcies]]\nid = "s"\n',
            "unknown section [[tables.devcies]] at line 3: did you mean [[tables.devices]]? "
            "(sections of [[tables]]: [tables.ruleset], [[tables.devices]])",
        ),
        ("[zzz]\n", f"unknown section [zzz] at line 1 {TABLES}"),
    ],
)
def test_a_misspelt_section_names_the_section_meant(tmp_path: Path, text: str, words: str) -> None:
    said = refused(tmp_path, text)
    assert words in said, said


def test_the_sections_of_a_rule_set_and_options_and_a_string_are_no_mistake(
    tmp_path: Path,
) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(
        'log_level = """\n[nope]\n"""\n'  # (refused by the model, not as a header)
        '[[tables]]\nid = "a"\n[tables.ruleset]\npreset = "classic6"\n'
        "[tables.ruleset.table]\nseats = 2\n"
        '[[tables.devices]]\nid = "s"\nkind = "shoe"\n[tables.devices.options]\nwire_id = "s"\n'
        "[broker.tls]\n"
    )
    with pytest.raises(ConfigError) as error:
        load_config(path, environ={})
    assert "log_level: Input should be" in str(error.value), error.value
    assert "unknown section" not in str(error.value)


def test_config_check_says_it_with_exit_status_2(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(BROKER + table("[[tables]]", "a") + table("[[table]]", "b"))
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=unset)
    assert result.exit_code == 2, result.output
    assert "unknown section [[table]] at line 10: did you mean [[tables]]?" in result.output
