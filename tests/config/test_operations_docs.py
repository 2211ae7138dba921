"""docs/operations.md as an operator copies it: its commands, its config, its systemd unit."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.config import load_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def studio_commands() -> list[list[str]]:
    """Every ``studio ...`` line of the shell blocks, without its comment; ``[--opt X]`` kept."""
    commands = []
    for block in blocks("sh"):
        for line in block.splitlines():
            words = shlex.split(re.sub(r"[][]", "", line.split("#", 1)[0]))
            if words[:1] == ["studio"]:
                commands.append(words[1:])
    return commands


@pytest.mark.parametrize("command", studio_commands(), ids=" ".join)
def test_every_documented_command_and_flag_exists(command: list[str]) -> None:
    # Leave out the placeholders (NAME, ID:HASH) and the paths: what is left names the
    # command and its flags.
    words = [w for w in command if w.startswith("--") or not (w.isupper() or "/" in w)]
    names = [w for w in words if not w.startswith("-")]
    result = CliRunner().invoke(app, [*names, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for flag in (w for w in words if w.startswith("--")):
        assert flag in result.output, f"{flag} is not an option of studio {' '.join(names)}"


def test_the_example_configuration_is_valid(tmp_path: Path) -> None:
    (example,) = blocks("toml")
    # Its TLS files must exist: put them (empty) in a folder of the test's own.
    for name in re.findall(r'"/etc/studio/([^"]+)"', example):
        (tmp_path / name).write_text("")
    path = tmp_path / "studio.toml"
    path.write_text(example.replace('"/etc/studio/', f'"{tmp_path}/'))
    config = load_config(path, environ={})
    assert [device.kind for _, device in config.devices()] == ["shoe", "camera"]


def test_the_systemd_unit_has_no_comment_after_a_value() -> None:
    # systemd.syntax(7): only whole lines starting with '#' or ';' are comments; text
    # after a value is part of it (EnvironmentFile= would name a file that is not there).
    (unit,) = blocks("ini")
    for line in unit.splitlines():
        if "=" in line and not line.startswith(("#", ";")):
            assert "#" not in line, line


def test_the_camera_steps_calibrate_with_this_cloths_layout() -> None:
    # Without --layout the studio's default cloth is fitted: on another cloth the markers
    # fit it badly (hwsim's: 5.6 mm, and a warning). Step 3 gave no --layout until
    # 2026-12-07, though config check's refusal of a table file cites it (an operator's walk).
    text = DOC.read_text()
    section = text[text.index("## Setting up a table's camera") :]
    section = section[: section.index("\n## ", 1)]
    commands = re.findall(r"`(studio calibrate table [^`]*)`", section.replace("\n   ", " "))
    assert commands, section
    for command in commands:
        assert "--layout " in command, command
