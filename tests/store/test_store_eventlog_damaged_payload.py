"""A record whose payload was changed by hand into something that is not a JSON object: a
read of it is a StoreError that names the log, the record, its kind and table, and tells
the operator to run ``studio audit verify``; a controller start on such a log ends with
exit status 2 and one error line. Until 2026-12-06 the read raised json's own
JSONDecodeError, and ``studio controller run`` (and ``studio demo``) ended with its
traceback, which named neither the record nor the log (a review of replay and restarts)."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from sql_support import run_sql
from studio_run import two_rounds

from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.store.eventlog import admin_events, events
from studio.streams import Fanout

STUDIO = Path(sys.executable).parent / "studio"

DAMAGED = [
    ("{not json", "its payload is not JSON (Expecting property name"),
    ("[1,2]", "its payload is a JSON array, not an object"),
    ("null", "its payload is a JSON null, not an object"),
]


def _named(exc: StoreError, table: str, record: int, kind: str, scope: str) -> None:
    text = str(exc)
    assert text.startswith(f"{table}: record {record} (kind {kind}, table {scope}) "), text
    assert "run `studio audit verify`" in text, text


async def _damage(db: Database, table: sa.Table, record: int, payload: str) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(sa.update(table).where(table.c.id == record).values(payload=payload))


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("payload", "what"), DAMAGED)
async def test_every_read_names_the_damaged_record(
    database: Database, payload: str, what: str
) -> None:
    log = EventLog(database)
    for n in range(5):
        await log.append("bj-1", "shoe.card", {"n": n}, round_id="R1")
    await _damage(database, events, 3, payload)

    with pytest.raises(StoreError) as read:
        await log.read()
    _named(read.value, "event_log", 3, "shoe.card", "bj-1")
    assert what in str(read.value)
    with pytest.raises(StoreError) as filtered:
        await log.read(table_id="bj-1", round_id="R1", kinds=["shoe.card"], after_id=2, limit=1)
    _named(filtered.value, "event_log", 3, "shoe.card", "bj-1")
    with pytest.raises(StoreError) as walked:
        async for _ in log.iterate(batch=2):
            pass
    _named(walked.value, "event_log", 3, "shoe.card", "bj-1")
    with pytest.raises(StoreError) as held:
        head = (await log.read(ids=[5]))[0]
        await log.holds(1, 5, head.hash)
    _named(held.value, "event_log", 3, "shoe.card", "bj-1")

    # The records around it are still read, and the audit's reading leaves it out, naming it.
    assert [r.id for r in await log.read(ids=[1, 2, 4, 5])] == [1, 2, 4, 5]
    bad: dict[int, str] = {}
    audited = EventLog(database, bad_payloads=bad)
    assert [r.id for r in await audited.read()] == [1, 2, 4, 5]
    assert list(bad) == [3]


@pytest.mark.timeout(60)
async def test_the_admin_log_is_named_without_showing_the_payload(database: Database) -> None:
    log = EventLog(database, admin_events)
    await log.append("users", "user.added", {"user": "boss"})
    await _damage(database, admin_events, 1, '{"password_hash": "$argon2id$secret')
    with pytest.raises(StoreError) as read:
        await log.read()
    _named(read.value, "admin_log", 1, "user.added", "users")
    assert "secret" not in str(read.value)


def _damaged_run(tmp_path: Path) -> tuple[str, int]:
    """A SQLite log of two rounds whose first shoe.card record's payload is not JSON."""
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> int:
        async with Database(url) as db:
            await two_rounds(db)
            async with db.engine.connect() as conn:
                query = sa.select(sa.func.min(events.c.id)).where(events.c.kind == "shoe.card")
                return int((await conn.execute(query)).scalar_one())

    record = asyncio.run(play())
    run_sql(url, sa.update(events).where(events.c.id == record).values(payload="{not json"))
    return url, record


@pytest.mark.timeout(60)
def test_a_controller_start_on_a_damaged_log_names_the_record(tmp_path: Path) -> None:
    url, record = _damaged_run(tmp_path)

    async def start() -> None:
        config = StudioConfig(tables=[TableSettings(id="bj-1", ruleset="clubhouse")])
        async with Database(url) as db:
            service = ControllerService(config, None, EventLog(db), Fanout(None), timers=False)
            await service.recover()

    with pytest.raises(StoreError) as failed:
        asyncio.run(start())
    _named(failed.value, "event_log", record, "shoe.card", "bj-1")


@pytest.mark.timeout(120)
async def test_the_controller_process_exits_2_with_one_error_line(
    broker: BrokerSettings, tmp_path: Path
) -> None:
    url, record = await asyncio.to_thread(_damaged_run, tmp_path)
    config = tmp_path / "studio.toml"
    config.write_text(
        'log_level = "WARNING"\n'
        f'[broker]\nurl = "{broker.url}"\nclient_id_prefix = "t{uuid.uuid4().hex[:8]}"\n'
        f'[database]\nurl = "{url}"\n'
        "[web]\nport = 0\n"
        '[[tables]]\nid = "bj-1"\nruleset = "clubhouse"\n'
    )
    env = {**os.environ, "STUDIO_WEB__PLATFORM_TOKEN": "platform-secret-0123456789abcdef0123"}
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    text = err.decode()
    assert process.returncode == 2, text
    assert "Traceback" not in text + out.decode(), text
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: event_log: record {record} (kind shoe.card, table bj-1) cannot be read: "
        "its payload is not JSON (Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)); the log is damaged: run `studio audit verify` on this database"
    ], text
