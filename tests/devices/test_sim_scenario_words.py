"""What ``hwsim check`` and ``hwsim run --exit-after-scenario`` say. Before, an error read
``steps.0: Value error, unknown shoe fault 'unplugg'`` (pydantic's prefix), and a run of
four steps, one a sleep, in a file with no name said ``scenario scenario: 3 steps done``
(the run itself: test_sim_scenarios.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hwsim.cli import app
from hwsim.scenario import Scenario

FOUR = "steps:\n  - {deal: 2}\n  - {sleep: 0.01}\n  - {cut: true}\n  - {deal: 1}\n"


def test_check_names_the_mistake_without_pydantics_prefix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps:\n  - {fault: unplugg, device: shoe}\n")
    result = CliRunner().invoke(app, ["check", str(bad)])
    assert result.exit_code == 2, result.output
    assert f"{bad}: steps.0: unknown shoe fault 'unplugg'; known: unplug" in result.output
    assert "Value error" not in result.output


def test_check_counts_every_step_and_names_an_unnamed_file(tmp_path: Path) -> None:
    four = tmp_path / "s.yaml"
    four.write_text(FOUR)
    result = CliRunner().invoke(app, ["check", str(four)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "s.yaml: 4 steps OK"
    named = Scenario.parse(
        {"name": "tour", "steps": [{"sleep": 0.01}, {"repeat": 3, "steps": [{"deal": 1}] * 2}]}
    )
    assert (named.label("x.yaml"), named.count()) == ("tour", "2 steps (7 played)")
