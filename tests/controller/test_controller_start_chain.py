"""A start checks the hash chain of what it replays and indexes: a record of the log changed
in the database (a payout in the last round) is refused, the record named, nothing started.

Until 2026-12-06 a start re-indexed the latest outputs from records it had not checked: a
payout edited into the log's last records reached the round index (the REST /api/rounds
answer), while ``studio audit verify`` found the chain broken. A start from a checkpoint
walks the chain from the checkpoint's ``through`` on (through its record), not the whole
log."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from studio.config import BrokerSettings
from studio.controller import ControllerService
from studio.controller.checkpoint import CHECKPOINT_KIND
from studio.store import EventLog, LogRecord, RoundIndex
from studio.store.eventlog import ChainBroken, StartChain
from studio.store.game_commands import game_commands, game_commands_through

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import controller, feed, generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402

INPUTS, _ = generate(8, seed=31)  # ~270 inputs, 8 rounds
STUDIO = Path(sys.executable).parent / "studio"


def service(log: EventLog, **options: Any) -> ControllerService:
    clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
    made = controller(log, clock, checkpoint_inputs=10**9, **options)
    made.test_clock = clock  # type: ignore[attr-defined]
    return made


async def played(log: EventLog, inputs: list[dict[str, Any]], *, checkpoint: bool = False) -> None:
    async with service(log) as first:
        await feed(first, inputs, first.test_clock)  # type: ignore[attr-defined]
        if checkpoint:
            await first.checkpoint("crash")


async def last_settlement(log: EventLog) -> LogRecord:
    records = await log.read(kinds=["out.round_event"], descending=True)
    return next(r for r in records if r.payload["type"] == "round_settled")


async def forge(log: EventLog, record: LogRecord, payload: dict[str, Any]) -> None:
    """Change a record's payload in the database, its hash left as it was."""
    async with log.db.engine.begin() as conn:
        where = log.table.c.id == record.id
        await conn.execute(sa.update(log.table).where(where).values(payload=json.dumps(payload)))


def paid(record: LogRecord, amount: str) -> dict[str, Any]:
    payload = json.loads(json.dumps(record.payload))
    payload["data"]["result"]["totals"]["payouts"] = amount
    return payload


def refused_at(exc: ChainBroken, record_id: int) -> None:
    text = str(exc)
    assert exc.record_id == record_id
    assert text.startswith(f"event_log: record {record_id} does not chain: "), text
    assert "Run `studio audit verify` on this database" in text, text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_payout_forged_in_the_last_round_stops_the_start(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        await played(log, INPUTS)
        settled = await last_settlement(log)
        round_id = settled.round_id
        assert round_id is not None
        index = RoundIndex(log.db)
        before = await index.get(round_id)
        assert before is not None and before["total_payout"] != "9999.00"
        await forge(log, settled, paid(settled, "9999.00"))

        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        refused_at(refused.value, settled.id)
        assert "content does not match its hash" in str(refused.value)
        # The index still says what was paid; the audit breaks at the same record.
        assert (await index.get(round_id)) == before
        report = await log.verify()
        assert (report.ok, report.first_bad_id) == (False, settled.id)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_start_from_a_checkpoint_walks_the_tail_from_the_checkpoint(
    tmp_path: Path, backend: str
) -> None:
    half = len(INPUTS) // 2
    async with database(backend, tmp_path) as log:
        await played(log, INPUTS[:half], checkpoint=True)
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        through = record.payload["through"]
        await played(log, INPUTS[half:])
        head = (await log.read(descending=True, limit=1))[0].id

        started = service(log)
        started._start_chain = chain = StartChain(log)  # (kept to count what it walked)
        assert await started.recover() > 0
        assert started.stats.checkpoints_refused == 0
        # The tail from the checkpoint's through, and the few outputs re-indexed before it.
        assert head - through + 1 <= chain.walked < head

        # A record before ``through`` is not replayed: not walked (`audit verify` finds it).
        early = (await log.read(kinds=["out.round_event"], limit=1))[0]
        assert early.id < through - 200
        await forge(log, early, {**early.payload, "seq": 999})
        assert await service(log).recover() > 0

        # The checkpoint's record is: the tail must chain to it.
        await forge(log, record, {**record.payload, "bytes": 1})
        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        refused_at(refused.value, record.id)


@pytest.mark.timeout(60)
async def test_a_record_deleted_from_the_tail_stops_the_start(tmp_path: Path) -> None:
    async with database("sqlite", tmp_path) as log:
        await played(log, INPUTS)
        settled = await last_settlement(log)
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(log.table).where(log.table.c.id == settled.id - 1))
        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        refused_at(refused.value, settled.id)
        assert f"gap: expected id {settled.id - 1}" in str(refused.value)


@pytest.mark.timeout(60)
async def test_commands_indexed_at_a_start_must_chain(tmp_path: Path) -> None:
    """The command index caught up at a start (a version without it ran) from the log:
    a forged answer is not indexed."""
    async with database("sqlite", tmp_path) as log:
        await played(log, INPUTS)
        answers = await log.read(kinds=["out.round_event"], descending=True)
        answer = next(r for r in answers if r.payload["type"] == "command_accepted")
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(game_commands))
            await conn.execute(sa.update(game_commands_through).values(record_id=0))
        await forge(log, answer, {**answer.payload, "ts": "2026-11-29T09:00:00+00:00"})
        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        refused_at(refused.value, answer.id)
        async with log.db.engine.connect() as conn:
            counted = sa.select(sa.func.count()).select_from(game_commands)
            assert (await conn.execute(counted)).scalar() == 0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_the_controller_process_exits_2_naming_the_record(
    broker: BrokerSettings, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    async with database("sqlite", tmp_path) as log:
        await played(log, INPUTS)
        settled = await last_settlement(log)
        await forge(log, settled, paid(settled, "9999.00"))
    config = tmp_path / "studio.toml"
    config.write_text(
        'log_level = "WARNING"\n'
        f'[broker]\nurl = "{broker.url}"\nclient_id_prefix = "t{uuid.uuid4().hex[:8]}"\n'
        f'[database]\nurl = "{url}"\n'
        "[web]\nport = 0\n"
        '[[tables]]\nid = "crash"\n'
        'ruleset = { preset = "clubhouse", timeouts = { betting_seconds = 5, decision_seconds = 5 } }\n'
    )
    env = {**os.environ, "STUDIO_WEB__PLATFORM_TOKEN": "platform-secret-0123456789abcdef0123"}
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    text = err.decode()
    assert process.returncode == 2, text
    assert "Traceback" not in text + out.decode(), text
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, text
    assert errors[0].startswith(
        f"error: event_log: record {settled.id} does not chain: content does not match its hash"
    ), text
    assert "Run `studio audit verify` on this database" in errors[0], text


@pytest.mark.timeout(60)
async def test_a_start_from_the_first_record_counts_the_records_as_the_audit_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Until 2026-12-07 the start's line said 2 records more than the log held (103 of 101):
    # the table's first logged settings, checked before the walk from record 1 went over
    # them, were counted twice (an operator's review).
    async with database("sqlite", tmp_path) as log:
        await played(log, INPUTS)
        head = (await log.read(descending=True, limit=1))[0].id
        audit = await log.verify()
        assert (audit.ok, audit.records) == (True, head)

        started = service(log)
        started._start_chain = chain = StartChain(log)
        caplog.set_level(logging.INFO, logger="studio.controller.service")
        assert await started.recover() > 0
        assert (chain.first, chain.last, chain.checked) == (1, head, head)
        said = [r.getMessage() for r in caplog.records if "chain checked" in r.getMessage()]
        assert said == [
            f"the event log's chain checked: {head} records, from record 1 to {head}"
        ], said
