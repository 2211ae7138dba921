"""A replay decides each run's inputs with the devices and timings that run had, and a
start whose replay does not end where its log ends is refused.

A review: a demo database played with cameras, started again without them, replayed every
old sighting as an "unauthorised camera device" (thousands of alerts, both tables paused at
R1, and the rounds settled live were cancelled and refunded); one restarted at another pace
(its round gap) came back at R1 with hundreds of alerts. Each start logs its devices and
timings now, and a start checks its replay against the log's last round event."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from studio.config.models import DeviceSettings, StudioConfig
from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store.eventlog import GENESIS, EventLog, chain_hash
from studio.store.eventlog import events as event_log
from studio.streams import Fanout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE  # noqa: E402
from postgres_support import backend_log  # noqa: E402
from test_controller_checkpoint import INPUTS, play, service  # noqa: E402

DEVICES = [
    DeviceSettings(id="shoe", kind="shoe", port="/dev/null"),
    DeviceSettings(id="cam", kind="camera", port="", options={"source": "0"}),
    DeviceSettings(id="shuf", kind="shuffler", port="/dev/zero"),
    DeviceSettings(id="cut", kind="cutcard", port="/dev/full"),
]
WITH_CAMERA = TABLE.model_copy(update={"devices": DEVICES})
WITHOUT_CAMERA = TABLE.model_copy(update={"devices": [d for d in DEVICES if d.id != "cam"]})


def gapped(log: EventLog, round_gap: float) -> ControllerService:
    """The harness's controller (its clock and table) with another round gap."""
    clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
    return ControllerService(
        StudioConfig(tables=[TABLE]),
        None,
        log,
        Fanout(None),
        clock=lambda: clock["t"],
        timers=False,
        round_gap=round_gap,
        checkpoint_inputs=10**9,
    )


async def as_an_older_version_logged(log: EventLog, *keys: str) -> None:
    """Take ``keys`` out of the ``table`` of every logged start, as a version before they
    were logged wrote it, and hash the chain again as it wrote it (a start checks the chain
    of what it replays: a record changed by hand is refused, since 2026-12-06)."""
    async with log.db.engine.begin() as conn:
        rows = (await conn.execute(sa.select(event_log).order_by(event_log.c.id))).all()
        prev = GENESIS
        for row in rows:
            payload = row.payload
            if row.kind == "controller.started":
                older = json.loads(payload)
                for key in keys:
                    del older["table"][key]
                payload = json.dumps(older)
            digest = chain_hash(prev, row.id, row.ts, row.table_id, row.round_id, row.kind, payload)
            changed = sa.update(event_log).where(event_log.c.id == row.id)
            await conn.execute(changed.values(payload=payload, prev_hash=prev, hash=digest))
            prev = digest
    log._head = None  # (the head this writer kept is hashed anew too)


def seen(made: ControllerService) -> dict[str, Any]:
    table = made.tables["crash"]
    return {
        "round": table.round_id,
        "phase": table.phase,
        "events": table.event_seq,
        "alerts": [(a["alert_id"], a["code"], a["state"]) for a in made.alerts()],
        "settlement": table.last_settlement,
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_device_removed_since_replays_the_runs_that_had_it(
    tmp_path: Path, backend: str
) -> None:
    async with backend_log(backend, tmp_path) as log:
        async with service(log, table=WITH_CAMERA) as first:
            await play(first, INPUTS[:400])
            played = seen(first)
        assert not any("unauthorised" in str(a) for a in played["alerts"])
        again = service(log, table=WITHOUT_CAMERA, checkpoint_inputs=10**9)
        await again.recover()
        assert seen(again) == played
        # The run's devices until the next start, which takes the configured ones.
        assert "cam" in again.tables["crash"].devices
        async with service(log, table=WITHOUT_CAMERA, checkpoint_inputs=10**9) as live:
            assert sorted(live.tables["crash"].devices) == ["cut", "shoe", "shuf"]
        started = await log.read(kinds=["controller.started"], descending=True, limit=1)
        assert started[0].payload["table"]["devices"] == [
            ["shoe", "shoe"],
            ["shuf", "shuffler"],
            ["cut", "cutcard"],
        ]


async def test_another_round_gap_replays_the_runs_with_theirs(tmp_path: Path) -> None:
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:  # the harness's round gap: 1 s
            await play(first, INPUTS[:400])
            played = seen(first)
        again = gapped(log, 9.0)
        await again.recover()
        assert seen(again) == played
        assert again.tables["crash"].round_gap == 1.0
        assert again.tables["crash"].configured_timings["round_gap"] == 9.0
        async with gapped(log, 9.0) as live:
            assert live.tables["crash"].round_gap == 9.0  # its own start


async def test_a_start_whose_replay_does_not_end_where_the_log_ends_is_refused(
    tmp_path: Path,
) -> None:
    """An older version's starts logged no timings: replayed with another round gap, its
    rounds open at other times, and the replay is not what was played. The start stops
    (before: it played on from there, and a manager's cancel refunded rounds paid live)."""
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
        await as_an_older_version_logged(log, "timings")
        with pytest.raises(StoreError, match="replaying its log does not give what was played"):
            await gapped(log, 9.0).recover()
        # With the round gap it was played with, it starts.
        again = service(log, checkpoint_inputs=10**9)
        assert await again.recover() > 0


async def test_runs_of_an_older_version_replay_with_the_first_logged_settings(
    tmp_path: Path,
) -> None:
    """A log an older version began (its starts without devices and timings), started once
    by this version with the settings it was played with (its start logs them): a later
    start with another round gap replays the older runs with the first logged ones. Before,
    with its own: every start after the first at another pace was refused for good (a
    review of the upgrade)."""
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
            played = seen(first)
        await as_an_older_version_logged(log, "devices", "timings")
        upgraded = service(log, checkpoint_inputs=10**9)
        async with upgraded:  # the first start of this version: as played (1 s)
            assert seen(upgraded)["round"] == played["round"]
        again = gapped(log, 9.0)
        await again.recover()  # refused before: the older runs replayed with 9 s
        assert {k: v for k, v in seen(again).items() if k != "events"} == {
            k: v for k, v in played.items() if k != "events"
        }
