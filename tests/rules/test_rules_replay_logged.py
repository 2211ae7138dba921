"""``studio replay`` of rounds read back from the event log of a controller run on a real
database (SQLite and PostgreSQL): the document built from the logged round events replays
to the logged settlement, with the engine logic of the run's ``controller.started``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
sys.path.insert(0, str(Path(__file__).parents[1] / "controller"))
from studio_run import Run
from test_rules_replay_controller import document
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog


async def test_logged_rounds_replay_to_their_settlement(database: Database, tmp_path: Path) -> None:
    run = Run(database)
    async with run.service:
        await run.open_shoe()
        await run.round({1: "p1", 2: "p2"}, ["TH", "8C", "7C", "9D", "TS", "5S", "KD"], [1, 2])
        await run.round({1: "p1"}, ["QH", "TC", "KS", "7D"], [1])
    log = EventLog(database)
    started = await log.read(kinds=["controller.started"])
    table_logic = started[-1].payload["logic"]
    for round_id in ("bj-1-R1", "bj-1-R2"):
        records = await log.read(round_id=round_id, kinds=["out.round_event"])
        logged = [{"type": r.payload["type"], "data": r.payload["data"]} for r in records]
        settled = next(e["data"]["result"] for e in logged if e["type"] == "round_settled")
        path = tmp_path / f"{round_id}.json"
        path.write_text(json.dumps(document(logged, table_logic)))
        # Through the command an auditor runs.
        result = CliRunner().invoke(app, ["replay", "--compact", str(path)])
        assert result.exit_code == 0, result.output
        replayed = json.loads(result.output)
        replayed.pop("events")
        assert replayed == settled, round_id
