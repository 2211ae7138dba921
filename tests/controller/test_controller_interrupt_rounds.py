"""A clean stop of ``studio demo`` records each round in progress as interrupted
(``ControllerService.interrupt_rounds``; ``studio controller run`` leaves it in progress and
resumes it at its next start). The time it writes as the round's ``settled`` is the
contract's (RFC 3339, UTC, milliseconds, ``Z``), as every other time the round index holds:
until 2026-12-07 it was ``isoformat()`` (``...57.971977+00:00``, a consumer's review), which
also sorted apart from the index's other times in the string comparisons of ``since``/``until``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import generate  # noqa: E402
from postgres_support import backend_log  # noqa: E402
from test_controller_checkpoint import play, service  # noqa: E402

INPUTS, _ = generate(3, seed=7)
CONTRACT_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def test_an_interrupted_round_is_recorded_with_the_contracts_time(tmp_path: Path) -> None:
    # Stop in the middle of the play: a round is open.
    async with backend_log("sqlite", tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: len(INPUTS) // 2])
        interrupted = await made.interrupt_rounds("demo stopped")
        assert len(interrupted) == 1, interrupted
        row = await made.rounds.get(interrupted[0])
    assert row is not None and row["status"] == "interrupted"
    assert CONTRACT_TIME.match(row["settled"]), row["settled"]
    assert CONTRACT_TIME.match(row["started"]), row["started"]
