"""A replay plays each run's inputs with the rule set that run had.

A start logged the table's settings that decide its inputs (single source, the camera's
window) but not its rule set: a replay took the configuration's rule set of now for the
whole log. A demo restarted at another pace (its betting and decision times) replayed
its earlier rounds with them, refused bets the first run had taken, and raised hundreds of
alerts that paused every table (a review). Each start logs its rule set now."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from studio.controller import ControllerService

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE  # noqa: E402
from postgres_support import backend_log  # noqa: E402
from test_controller_checkpoint import INPUTS, play, service  # noqa: E402

SLOW = TABLE.model_copy(
    update={
        "ruleset": {
            "preset": "clubhouse",
            "timeouts": {"betting_seconds": 30, "decision_seconds": 30},
        }
    }
)


def seen(made: ControllerService) -> dict[str, Any]:
    table = made.tables["crash"]
    return {
        "round": table.round_id,
        "phase": table.phase,
        "alerts": [(a["alert_id"], a["code"], a["state"]) for a in made.alerts()],
        "settlement": table.last_settlement,
    }


async def test_a_start_with_other_timeouts_replays_the_earlier_rounds_as_they_were_played(
    tmp_path: Path,
) -> None:
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
            played = seen(first)
        again = service(log, table=SLOW, checkpoint_inputs=10**9)
        await again.recover()  # the whole log: its configuration changed
        assert seen(again) == played
        table = again.tables["crash"]
        assert table.ruleset.timeouts.betting_seconds == 5  # the run's, until the next start
        assert table.configured_ruleset.timeouts.betting_seconds == 30
        async with service(log, table=SLOW, checkpoint_inputs=10**9) as live:
            assert live.tables["crash"].ruleset.timeouts.betting_seconds == 30  # its own start
        started = await log.read(kinds=["controller.started"], descending=True, limit=1)
        assert started[0].payload["ruleset"]["timeouts"]["betting_seconds"] == 30


async def test_a_start_logged_without_a_rule_set_plays_the_configured_one(tmp_path: Path) -> None:
    """An older version's log: as before, the configuration's rule set plays."""
    async with backend_log("sqlite", tmp_path) as log:
        await log.append("crash", "controller.started", {"logic": 15, "table": {}})
        again = service(log, table=SLOW)
        await again.recover()
        assert again.tables["crash"].ruleset.timeouts.betting_seconds == 30


async def test_a_checkpoint_after_a_change_of_rule_set_is_taken_at_the_next_start(
    tmp_path: Path,
) -> None:
    """A checkpoint is valid for the configuration: the replay's table plays the logged
    rule set, and its checkpoint was taken for that one, so every start after a change
    replayed the whole log again (CI: test_an_old_signed_checkpoint_... caught it)."""
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:300])
        assert await service(log, table=SLOW, checkpoint_inputs=1).recover() == 301
        assert await service(log, table=SLOW, checkpoint_inputs=1).recover() == 0
