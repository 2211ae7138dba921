"""An idle table does not hold every start's walk of the hash chain back.

A start walks the chain from the lowest record it reads to the head. Until 2026-12-06 a
table that stopped dealing kept its old checkpoint, and each start re-indexed its last
outputs, long before: every start walked from there (a table closed for a month beside busy
ones: millions of records, minutes). Now a start (or the running controller) whose table's
checkpoint stands far behind the log's head checkpoints it again at the record walked, and
a start re-indexes only the outputs logged after the one before it re-indexed (the
checkpoint's ``indexed``). An input of the table logged after its checkpoint is still walked
and refused when changed, and so is its last round event, which lies before it."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from studio.controller import ControllerService
from studio.controller.checkpoint import CHECKPOINT_KIND
from studio.store import EventLog, LogRecord
from studio.store.checkpoints import checkpoints
from studio.store.eventlog import ChainBroken, StartChain
from studio.store.rounds import RoundIndex, check_index, rounds

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE, controller, feed, generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402
from test_controller_checkpoint import assert_same  # noqa: E402

IDLE = TABLE.model_copy(update={"id": "idle"})
INPUTS, _ = generate(8, seed=31)  # ~270 inputs, 8 rounds
IDLE_INPUTS = INPUTS[:60]  # two rounds, then the table is left


def service(log: EventLog, clock: dict[str, datetime], **options: Any) -> ControllerService:
    return controller(
        log,
        clock,
        also=[IDLE],
        checkpoint_key="idle-table-test-key-" + "0" * 16,
        checkpoint_inputs=10**9,
        **options,
    )


async def played_then_idle(log: EventLog, clock: dict[str, Any]) -> tuple[int, int]:
    """The idle table deals two rounds and is checkpointed; the other deals eight after it.
    Returns the idle table's checkpoint's ``through`` and its last output."""
    async with service(log, clock, checkpoint_records=10**9) as first:
        await feed(first, IDLE_INPUTS, clock, table="idle")
        await first.checkpoint("idle")
        await feed(first, INPUTS, clock, table="crash")
    (record,) = await log.read(table_id="idle", kinds=[CHECKPOINT_KIND])
    outputs = await log.read(table_id="idle", kinds=["out.round_event"], descending=True, limit=1)
    return record.payload["through"], outputs[0].id


async def resealed_beside_busy(log: EventLog, clock: dict[str, Any]) -> LogRecord:
    """:func:`played_then_idle`, then a start that re-seals the idle table's checkpoint (and
    checkpoints the busy one) before the busy one deals a few inputs more. Returns the idle
    table's re-sealed checkpoint record."""
    await played_then_idle(log, clock)
    async with service(log, clock, checkpoint_records=100) as again:
        await feed(again, INPUTS[:20], clock, table="crash")
    return (await log.read(table_id="idle", kinds=[CHECKPOINT_KIND]))[-1]


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


def assert_same_tables(a: ControllerService, b: ControllerService) -> None:
    """Every table of ``a`` and ``b`` the same all the way down, with its tracker and
    identities (as ``test_controller_checkpoint`` compares a start with the whole log)."""
    assert list(a.tables) == list(b.tables)
    for t in a.tables:
        assert_same(
            (a.tables[t], a._trackers[t], a._identities[t]),
            (b.tables[t], b._trackers[t], b._identities[t]),
            f"{t}: (table, tracker, identities)",
        )


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
            await feed(again, INPUTS[:20], clock, table="crash")  # the other table deals on

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
        assert whole.stats.checkpoints_refused == 0
        assert_same_tables(started, whole)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_idle_tables_input_after_its_moved_checkpoint_is_still_walked(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        await played_then_idle(log, clock)
        async with service(log, clock, checkpoint_records=100) as again:
            await feed(again, INPUTS[:20], clock, table="crash")
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
            await feed(first, IDLE_INPUTS, clock, table="idle")
            await first.checkpoint("idle")
            await feed(first, INPUTS[:half], clock, table="crash")
        (old,) = await log.read(table_id="idle", kinds=[CHECKPOINT_KIND])
        outputs = await log.read(table_id="idle", kinds=["out.round_event"])
        async with service(log, clock, checkpoint_records=10**9, checkpoint_check=0.02) as running:
            running.checkpoint_records = 100  # (not at its start: while it runs)
            await feed(running, INPUTS[half:], clock, table="crash")
            async with asyncio.timeout(30):
                while not await log.read(table_id="idle", kinds=[CHECKPOINT_KIND], after_id=old.id):
                    await asyncio.sleep(0.02)
        _, first_walked = await walked_from(log, clock)
        assert first_walked > max(old.payload["through"], outputs[-1].id)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_idle_tables_last_round_event_before_its_moved_checkpoint_is_still_checked(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        resealed = await resealed_beside_busy(log, clock)
        (last,) = await log.read(
            table_id="idle", kinds=["out.round_event"], descending=True, limit=1
        )
        # Before the checkpoint and before the start's walk: only ``cover_one`` reads it.
        assert last.id < resealed.payload["through"]
        _, first = await walked_from(log, clock)
        assert first > last.id
        # Its time changed, not what the replay compares (seq, type, round): only its hash
        # tells.
        edited = dict(last.payload, ts="2020-01-01T00:00:00+00:00")
        await changed(log, last, json.dumps(edited))
        with pytest.raises(ChainBroken) as refused:
            await service(log, clock).recover()
        assert refused.value.record_id == last.id
        assert "content does not match its hash" in str(refused.value)


@pytest.mark.timeout(60)
async def test_a_start_reindexes_only_the_outputs_logged_after_the_checkpoints_indexed(
    tmp_path: Path,
) -> None:
    async with database("sqlite", tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        resealed = await resealed_beside_busy(log, clock)
        busy_checkpoint = (await log.read(table_id="crash", kinds=[CHECKPOINT_KIND]))[-1]
        # The idle table's last settlement, indexed (and re-indexed by the start that
        # re-sealed its checkpoint) up to ``indexed``; the busy table's last alert, logged by
        # the run after its own checkpoint's ``indexed``.
        idle_settled = [
            r
            for r in await log.read(table_id="idle", kinds=["out.round_event"])
            if r.payload["type"] == "round_settled"
        ][-1]
        (busy_alert,) = await log.read(
            table_id="crash", kinds=["out.alert"], descending=True, limit=1
        )
        assert idle_settled.id <= resealed.payload["indexed"]
        assert busy_alert.id > busy_checkpoint.payload["indexed"]
        idle_round, busy_round = idle_settled.round_id, busy_alert.round_id
        index = RoundIndex(log.db)
        before = {r: await index.get(r) for r in (idle_round, busy_round)}
        assert before[idle_round]["status"] == "settled"
        assert before[busy_round]["alerts"]
        # Each row as a crash between logging the output and indexing it leaves it.
        async with log.db.engine.begin() as conn:
            await conn.execute(
                sa.update(rounds)
                .where(rounds.c.round_id == idle_round)
                .values(status="in_progress", ended=None, total_stake="0.00", total_payout="0.00")
            )
            await conn.execute(
                sa.update(rounds).where(rounds.c.round_id == busy_round).values(alerts="[]")
            )

        await service(log, clock).recover()
        assert await index.get(busy_round) == before[busy_round]  # mended
        # Logged before ``indexed``: not read again, so not mended; the audit names it.
        assert (await index.get(idle_round) or {}).get("status") == "in_progress"
        report = await check_index(log.db, log)
        assert {r for r, _ in report.problems} == {idle_round}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_start_reseals_an_idle_table_whose_reindexed_outputs_lie_far_back(
    tmp_path: Path, backend: str
) -> None:
    # The idle table checkpointed in the run it played in (as the running controller's
    # records trigger may do): its checkpoint is recent, but its ``indexed`` is 0, so a start
    # re-indexes its old outputs and walks from them. Until 2026-12-06 every start did so
    # until the log held CHECKPOINT_RECORDS more records past that checkpoint.
    async with database(backend, tmp_path) as log:
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        through, last_output = await played_then_idle(log, clock)
        (old,) = await log.read(table_id="idle", kinds=[CHECKPOINT_KIND])
        assert old.payload["indexed"] < last_output
        head = (await log.read(descending=True, limit=1))[0].id
        first_output = (await log.read(table_id="idle", kinds=["out.round_event"], limit=1))[0]
        # Not far enough behind to be re-sealed for its ``through``; its outputs are.
        records = head - through + 1
        assert head - first_output.id >= records

        started = service(log, clock, checkpoint_records=records)
        started._start_chain = chain = StartChain(log)
        await started.recover()
        assert chain.first is not None and chain.first <= first_output.id  # this start reads them
        resealed = (await log.read(table_id="idle", kinds=[CHECKPOINT_KIND]))[-1]
        assert resealed.id > old.id
        assert resealed.payload["indexed"] >= head

        again, first = await walked_from(log, clock)
        assert first > last_output  # the next start does not
        assert_same_tables(started, again)
        # What the re-sealed checkpoint restores is what the whole log builds.
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(checkpoints))
        whole = service(log, clock, checkpoint_records=10**9)
        await whole.recover()
        assert whole.stats.checkpoints_refused == 0
        assert_same_tables(again, whole)
