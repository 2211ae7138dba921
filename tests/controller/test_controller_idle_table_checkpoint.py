"""An idle table does not hold every start's walk of the hash chain back.

A start walks the chain from the lowest record it reads to the head. Until 2026-12-06 a
table that stopped dealing kept its old checkpoint, and each start re-indexed its last
outputs, long before: every start walked from there (a table closed for a month beside busy
ones: millions of records, minutes). Now a start (or the running controller) whose table's
checkpoint stands far behind the log's head checkpoints it again at the record walked, and
a start re-indexes only the outputs logged after the one before it re-indexed. An input of
the table logged after its checkpoint is still walked and refused when changed."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from studio.config.models import StudioConfig
from studio.controller import ControllerService
from studio.controller.checkpoint import CHECKPOINT_KIND
from studio.store import EventLog, LogRecord
from studio.store.checkpoints import checkpoints
from studio.store.eventlog import ChainBroken, StartChain
from studio.streams import Fanout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE, generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402

IDLE = TABLE.model_copy(update={"id": "idle"})
INPUTS, _ = generate(8, seed=31)  # ~270 inputs, 8 rounds
IDLE_INPUTS = INPUTS[:60]  # two rounds, then the table is left


def service(log: EventLog, clock: dict[str, datetime], **options: Any) -> ControllerService:
    return ControllerService(
        StudioConfig(
            tables=[TABLE, IDLE], database={"checkpoint_key": "idle-table-test-key-" + "0" * 16}
        ),
        None,
        log,
        Fanout(None),
        clock=lambda: clock["t"],
        timers=False,
        round_gap=1.0,
        checkpoint_inputs=10**9,
        **options,
    )


async def fed(
    service: ControllerService, table: str, inputs: list[dict[str, Any]], clock: dict[str, Any]
) -> None:
    for item in inputs:
        clock["t"] = datetime.fromisoformat(item["ts"])
        try:
            await service.submit(table, item["kind"], item["data"])
        except Exception:
            if item["kind"] != "manager.action":  # only a manager's request may be refused
                raise


async def played_then_idle(log: EventLog, clock: dict[str, Any]) -> tuple[int, int]:
    """The idle table deals two rounds and is checkpointed; the other deals eight after it.
    Returns the idle table's checkpoint's ``through`` and its last output."""
    async with service(log, clock, checkpoint_records=10**9) as first:
        await fed(first, "idle", IDLE_INPUTS, clock)
        await first.checkpoint("idle")
        await fed(first, "crash", INPUTS, clock)
    (record,) = await log.read(table_id="idle", kinds=[CHECKPOINT_KIND])
    outputs = await log.read(table_id="idle", kinds=["out.round_event"], descending=True, limit=1)
    return record.payload["through"], outputs[0].id


async def walked_from(log: EventLog, clock: dict[str, Any]) -> tuple[ControllerService, int]:
    """A start's rebuild (nothing submitted), and the lowest record its walk read."""
    started = service(log, clock)
    started._start_chain = chain = StartChain(log)  # (kept to see what it walked)
    await started.recover()
    assert started.stats.checkpoints_refused == 0
    assert chain.first is not None
    return started, chain.first


async def changed(log: EventLog, record: LogRecord, payload: str | None) -> None:
    """Set a record's stored payload (its hash left as it was), or delete it (None)."""
    where = log.table.c.id == record.id
    async with log.db.engine.begin() as conn:
        if payload is None:
            await conn.execute(sa.delete(log.table).where(where))
        else:
            await conn.execute(sa.update(log.table).where(where).values(payload=payload))


def states(started: ControllerService) -> dict[str, Any]:
    return {t: (c.state().model_dump(), c.prompt()) for t, c in started.tables.items()}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_the_next_start_walks_from_after_an_idle_tables_old_checkpoint(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        old_through, last_output = await played_then_idle(log, clock)
        head = (await log.read(descending=True, limit=1))[0].id
        assert head - old_through > 100
        async with service(log, clock, checkpoint_records=100) as again:  # re-seals it
            await fed(again, "crash", INPUTS[:20], clock)  # the other table deals on

        started, first = await walked_from(log, clock)
        assert first > max(old_through, last_output)
        assert first >= head  # not a record the idle table logged while it dealt
        resealed = (await log.read(table_id="idle", kinds=[CHECKPOINT_KIND]))[-1]
        assert resealed.payload["through"] >= head
        # What the re-sealed checkpoint restores is what the whole log builds.
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(checkpoints))
        whole = service(log, clock, checkpoint_records=10**9)
        await whole.recover()
        assert states(started) == states(whole)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_idle_tables_input_after_its_moved_checkpoint_is_still_walked(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        await played_then_idle(log, clock)
        async with service(log, clock, checkpoint_records=100) as again:
            await fed(again, "crash", INPUTS[:20], clock)
        resealed = (await log.read(table_id="idle", kinds=[CHECKPOINT_KIND]))[-1]
        # The idle table's start input logged after its checkpoint moved up: replayed.
        (started,) = await log.read(
            table_id="idle", kinds=["controller.started"], after_id=resealed.id
        )
        async with log.db.engine.connect() as conn:
            query = sa.select(log.table.c.payload).where(log.table.c.id == started.id)
            stored = (await conn.execute(query)).scalar_one()
        edited = json.loads(stored)
        edited["table"]["camera_window_seconds"] = 99
        for payload, why in (
            (json.dumps(edited), "content does not match its hash"),
            (None, "gap"),
        ):
            await changed(log, started, payload)
            with pytest.raises(ChainBroken) as refused:
                await service(log, clock).recover()
            assert refused.value.record_id in (started.id, started.id + 1)
            assert why in str(refused.value)
            if payload is not None:
                await changed(log, started, stored)


@pytest.mark.timeout(60)
async def test_the_running_controller_moves_an_idle_tables_checkpoint_up(tmp_path: Path) -> None:
    half = len(INPUTS) // 2
    async with database("sqlite", tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        async with service(log, clock, checkpoint_records=10**9) as first:
            await fed(first, "idle", IDLE_INPUTS, clock)
            await first.checkpoint("idle")
            await fed(first, "crash", INPUTS[:half], clock)
        (old,) = await log.read(table_id="idle", kinds=[CHECKPOINT_KIND])
        outputs = await log.read(table_id="idle", kinds=["out.round_event"])
        async with service(log, clock, checkpoint_records=10**9, checkpoint_check=0.02) as running:
            running.checkpoint_records = 100  # (not at its start: while it runs)
            await fed(running, "crash", INPUTS[half:], clock)
            async with asyncio.timeout(30):
                while not await log.read(table_id="idle", kinds=[CHECKPOINT_KIND], after_id=old.id):
                    await asyncio.sleep(0.02)
        _, first_walked = await walked_from(log, clock)
        assert first_walked > max(old.payload["through"], outputs[-1].id)
