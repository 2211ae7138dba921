"""The ``studio`` program imports only the context whose command is run (studio/cli.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from studio import cli
from studio.cli import _CONTEXTS, build, contexts_for


@pytest.mark.parametrize("module", list(_CONTEXTS))
def test_each_context_registers_the_commands_it_is_listed_with(module: str) -> None:
    group = typer.main.get_command(build([module]))
    assert isinstance(group, typer.main.TyperGroup)
    assert sorted(group.commands) == sorted(_CONTEXTS[module])


def test_every_command_is_listed_once() -> None:
    group = typer.main.get_command(cli.app)
    assert isinstance(group, typer.main.TyperGroup)
    listed = [c for commands in _CONTEXTS.values() for c in commands]
    assert sorted(group.commands) == sorted(listed)
    for module, commands in _CONTEXTS.items():
        for command in commands:
            assert contexts_for([command, "--help"]) == [module]
            assert contexts_for(["-q", command]) == [module]


@pytest.mark.parametrize("args", [[], ["--help"], ["contoller", "run"], ["--install-completion"]])
def test_help_and_mistakes_get_every_command(args: list[str]) -> None:
    assert contexts_for(args) is None


@pytest.mark.parametrize(
    ("module", "command", "says"),
    [
        ("studio.demo.cli", "demo", "Run a live studio"),  # a context of one command
        ("studio.rules.cli", "replay", "Replay a recorded round"),
        ("studio.controller.cli", "controller", "run"),
    ],
)
def test_an_app_of_one_context_is_still_a_group(module: str, command: str, says: str) -> None:
    """typer runs an app of one command as that command: ``studio demo`` would have taken
    ``demo`` for an argument of its own."""
    result = CliRunner().invoke(build([module]), [command, "--help"])
    assert result.exit_code == 0, result.output
    assert says in result.output


def test_the_program_runs_the_command_asked_for() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "studio.cli", "demo", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Run a live studio" in done.stdout
    # Only the demo's context was imported (the camera's OpenCV, for one, was not).
    probe = (
        "import sys; sys.argv = ['studio', 'config', '--help']\n"
        "from studio import cli\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "print('drivers.camera.cli' in sys.modules, 'studio.config.cli' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False True"
