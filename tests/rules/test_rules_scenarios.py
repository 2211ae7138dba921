"""Scenario files from the seed texts, run through the replay function."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from studio.rules.replay import replay_round

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.json"))


def _lookup(doc: Any, path: str) -> Any:
    for part in path.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def test_there_is_a_scenario_per_required_case() -> None:
    names = {p.stem for p in SCENARIOS}
    assert len(names) >= 10


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text())
    result = replay_round(scenario["round"])
    assert scenario["expect"], "a scenario must assert something"
    for key, expected in scenario["expect"].items():
        assert _lookup(result, key) == expected, key
    totals = result["totals"]
    assert Decimal(totals["stakes"]) == Decimal(totals["payouts"]) + Decimal(totals["house_net"])
