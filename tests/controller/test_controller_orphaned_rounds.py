"""A round left unfinished by a table taken out of the configuration is said at each start.

No start replays a table that is not configured, so its round in progress (or recorded as
interrupted at a stop) is neither settled nor refunded; before, nothing said so (a review
of restarts)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from studio.config.models import TableSettings

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from postgres_support import backend_log  # noqa: E402
from test_controller_checkpoint import INPUTS, play, service  # noqa: E402

OTHER = TableSettings(id="other", ruleset="clubhouse")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_an_unfinished_round_of_a_table_no_longer_configured_is_an_error_at_the_start(
    tmp_path: Path, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with backend_log(backend, tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
            table = first.tables["crash"]
            assert table.round_id is not None and table.phase not in ("settled", "waiting_shoe")
            left = table.round_id
        with caplog.at_level(logging.ERROR):
            again = service(log, table=OTHER)
            await again.recover()
        assert again.stats.orphaned_rounds == 1
        said = (
            f"round {left} of table crash is in progress, and the table is not in the configuration"
        )
        assert said in caplog.text
        caplog.clear()
        with caplog.at_level(logging.ERROR):
            configured = service(log)  # the table back: its start settles or cancels it
            await configured.recover()
        assert configured.stats.orphaned_rounds == 0
        assert "not in the configuration" not in caplog.text
