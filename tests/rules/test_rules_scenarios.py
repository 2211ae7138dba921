"""Scenario files from the seed texts, run through the replay function."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from studio.rules.replay import replay_round, scenario_parts, unmet_expectations

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.json"))


def test_there_is_a_scenario_per_required_case() -> None:
    names = {p.stem for p in SCENARIOS}
    assert len(names) >= 10


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    parts = scenario_parts(json.loads(path.read_text()))
    assert parts is not None, "a scenario file holds a round and what it must show"
    round_doc, expect = parts
    result = replay_round(round_doc)
    assert expect, "a scenario must assert something"
    assert unmet_expectations(result, expect) == []
    totals = result["totals"]
    assert Decimal(totals["stakes"]) == Decimal(totals["payouts"]) + Decimal(totals["house_net"])
