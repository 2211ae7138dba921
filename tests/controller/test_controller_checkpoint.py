"""A start restores each table from its checkpoint and replays only the inputs logged after
it; what it builds must be exactly what replaying the table's whole log builds.

Before, every start replayed every input ever logged (7,000 a second here: a table dealing
around the clock added about 3.5 s of start-up a day). The scripted play of the
crash-recovery harness (bets, cards, camera sightings, decisions, timers, mismatches and
manager resolutions) is logged through a real controller and database; checkpoints are
taken at arbitrary points, mid-round among them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import pickle
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pydantic import BaseModel

from studio.config.models import StudioConfig, TableSettings
from studio.controller import ControllerService, Input, TableController
from studio.controller.checkpoint import CHECKPOINT_KIND, CheckpointError, fingerprint, loads
from studio.controller.service import INPUT_KINDS
from studio.controller.table import _ACCEPTED as ACCEPTED
from studio.errors import StudioError
from studio.rules.ruleset import ruleset_from_spec
from studio.store import Database, EventLog
from studio.store.checkpoints import checkpoints
from studio.streams import Fanout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE, generate  # noqa: E402
from postgres_support import fresh_database  # noqa: E402

Play = list[dict[str, Any]]
INPUTS, _ = generate(40, seed=23)  # ~1,350 inputs


@asynccontextmanager
async def database(backend: str, tmp_path: Path) -> AsyncIterator[EventLog]:
    if backend == "sqlite":
        async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
            yield EventLog(db)
        return
    async with fresh_database() as url, Database(url) as db:
        yield EventLog(db)


def service(log: EventLog, *, table: TableSettings = TABLE, **options: Any) -> ControllerService:
    clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
    made = ControllerService(
        StudioConfig(tables=[table]),
        None,
        log,
        Fanout(None),
        clock=lambda: clock["t"],
        timers=False,
        round_gap=1.0,
        **options,
    )
    made.test_clock = clock  # type: ignore[attr-defined]
    return made


async def play(
    controller: ControllerService, inputs: Play, *, every: Callable[[int], bool] = lambda n: False
) -> None:
    """Submit ``inputs`` (a refused manager action is part of the script); checkpoint after
    each input number ``every`` picks."""
    for n, item in enumerate(inputs, 1):
        controller.test_clock["t"] = datetime.fromisoformat(item["ts"])  # type: ignore[attr-defined]
        try:
            await controller.submit("crash", item["kind"], item["data"])
        except StudioError:
            if item["kind"] != "manager.action":
                raise
        if every(n):
            await controller.checkpoint("crash")


async def rebuilt(log: EventLog, *, use_checkpoint: bool) -> tuple[ControllerService, int]:
    """A controller rebuilt from the log as a start does (nothing submitted), and how many
    inputs it replayed."""
    if not use_checkpoint:
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(checkpoints))
    made = service(log, checkpoint_inputs=10**9)
    return made, await made.recover()


def assert_same(a: Any, b: Any, path: str = "", seen: set[int] | None = None) -> None:
    """``a`` and ``b`` hold the same state, all the way down (dict order included)."""
    seen = set() if seen is None else seen
    plain = (str, int, float, bool, type(None), Decimal, datetime, timedelta, Enum, BaseModel)
    if isinstance(a, plain):
        assert type(a) is type(b) and a == b, f"{path}: {a!r} != {b!r}"
        return
    if id(a) in seen:
        return
    seen.add(id(a))
    assert type(a) is type(b), f"{path}: {type(a)} != {type(b)}"
    if isinstance(a, Mapping):
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]", seen)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]", seen)
    elif isinstance(a, (set, frozenset)):
        assert a == b, f"{path}: {a} != {b}"
    else:
        names = [f.name for f in dataclasses.fields(a)] if dataclasses.is_dataclass(a) else []
        names += [n for n in getattr(a, "__dict__", {}) if n not in names]
        assert names, f"{path}: nothing compared in a {type(a).__name__}"
        for name in names:
            assert_same(getattr(a, name), getattr(b, name), f"{path}.{name}", seen)


def assert_same_tables(a: ControllerService, b: ControllerService) -> None:
    assert_same(a.tables["crash"], b.tables["crash"], "table")
    assert_same(a._trackers["crash"], b._trackers["crash"], "tracker")
    assert_same(a._identities["crash"], b._identities["crash"], "identities")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_start_from_a_checkpoint_builds_what_the_whole_log_builds(
    tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as log:
        async with service(log) as first:
            # Checkpoints every 97 inputs: some mid-round, some between rounds.
            await play(first, INPUTS, every=lambda n: n % 97 == 0)
        assert first.stats.checkpoints == len(INPUTS) // 97
        last = (await log.read(kinds=[CHECKPOINT_KIND], descending=True, limit=1))[0]
        from_checkpoint, tail = await rebuilt(log, use_checkpoint=True)
        whole, replayed = await rebuilt(log, use_checkpoint=False)
        assert replayed == len(await log.read(kinds=INPUT_KINDS))
        assert tail == len(await log.read(kinds=INPUT_KINDS, after_id=last.payload["through"]))
        assert 0 < tail < 97
        assert whole.stats.checkpoints_refused == from_checkpoint.stats.checkpoints_refused == 0
        assert_same_tables(from_checkpoint, whole)
        # A bare acceptance is one shared answer, after a checkpoint too.
        answers = from_checkpoint.tables["crash"].commands_seen.values()
        accepted = [a for a in answers if a == {"accepted": True}]
        assert accepted and all(a is ACCEPTED for a in accepted)
        assert (await log.verify()).ok


async def test_a_table_restored_from_a_checkpoint_plays_on_as_the_whole_log_would(
    tmp_path: Path,
) -> None:
    half = len(INPUTS) // 2
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:half])
            await first.checkpoint("crash")
        from_checkpoint, tail = await rebuilt(log, use_checkpoint=True)
        whole, _ = await rebuilt(log, use_checkpoint=False)
        assert tail == 0
        a, b = from_checkpoint.tables["crash"], whole.tables["crash"]
        for item in INPUTS[half:]:
            inp = Input(item["kind"], item["data"], datetime.fromisoformat(item["ts"]))
            outputs: list[list[Any]] = []
            for table in (a, b):
                try:
                    outputs.append([(o.channel, o.payload) for o in table.handle(inp)])
                except StudioError as exc:  # a manager's request the script knows is refused
                    outputs.append([str(exc)])
            assert outputs[0] == outputs[1], item
        assert_same(a, b, "table")


async def test_a_long_replay_at_a_start_is_saved_as_a_checkpoint_before_the_first_input(
    tmp_path: Path,
) -> None:
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:300])
        again = service(log, checkpoint_inputs=100)
        assert await again.recover() == 301  # the script's inputs and one start
        assert again.stats.checkpoints == 1
        assert again._since_checkpoint["crash"] == 0  # not taken again 30 s later
        assert await service(log).recover() == 0
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        (last_input,) = await log.read(kinds=INPUT_KINDS, descending=True, limit=1)
        assert record.payload["through"] == last_input.id


async def test_the_controller_checkpoints_a_table_in_the_background(tmp_path: Path) -> None:
    async with database("sqlite", tmp_path) as log:
        async with service(log, checkpoint_inputs=100, checkpoint_check=0.02) as running:
            await play(running, INPUTS[:150])
            async with asyncio.timeout(30):
                while running.stats.checkpoints < 1:
                    await asyncio.sleep(0.02)
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        assert record.payload["through"] >= 100
        from_checkpoint, tail = await rebuilt(log, use_checkpoint=True)
        whole, replayed = await rebuilt(log, use_checkpoint=False)
        assert tail < replayed
        assert_same_tables(from_checkpoint, whole)
        assert (await log.verify()).ok


async def _tamper(log: EventLog, change: Callable[[bytes], bytes]) -> None:
    async with log.db.engine.begin() as conn:
        row = (await conn.execute(sa.select(checkpoints))).one()
        await conn.execute(sa.update(checkpoints).values(state=change(bytes(row.state))))


async def test_an_altered_checkpoint_is_not_read_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
            await first.checkpoint("crash")
        # Another round number, same length: the digest in the chained record differs.
        await _tamper(log, lambda state: state.replace(b"crash-R", b"crash-Q", 1))
        with caplog.at_level(logging.ERROR):
            from_checkpoint, replayed = await rebuilt(log, use_checkpoint=True)
        assert from_checkpoint.stats.checkpoints_refused == 1
        assert "does not match its record" in caplog.text
        whole, replayed_whole = await rebuilt(log, use_checkpoint=False)
        assert replayed == replayed_whole
        assert_same_tables(from_checkpoint, whole)


class _Evil:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch evil-was-run",))


async def test_a_checkpoint_builds_nothing_but_plain_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    evil = pickle.dumps(_Evil())
    with pytest.raises(CheckpointError, match="may not build"):
        loads(evil)
    with pytest.raises(CheckpointError, match="holds a list"):
        loads(pickle.dumps([1, 2]))
    # Nor through a state module's imports (a dotted name), nor another class of its own.
    reach = b"\x80\x04cstudio.controller.checkpoint\nsys.getrecursionlimit\n)R."
    with pytest.raises(CheckpointError, match=r"may not build .*sys\.getrecursionlimit"):
        loads(reach)
    service_class = b"\x80\x04cstudio.controller.service\nControllerService\n."
    with pytest.raises(CheckpointError, match=r"may not build .*ControllerService"):
        loads(service_class)
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:200])
            await first.checkpoint("crash")
        # Written by someone who could also write its record's digest: still not run.
        await _tamper(log, lambda state: evil)
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        async with log.db.engine.begin() as conn:
            payload = {**record.payload, "digest": hashlib.sha256(evil).hexdigest()}
            await conn.execute(
                sa.update(log.table)
                .where(log.table.c.id == record.id)
                .values(payload=json.dumps(payload))
            )
        with caplog.at_level(logging.ERROR):
            restored, _ = await rebuilt(log, use_checkpoint=True)
        assert "may not build" in caplog.text
        assert restored.stats.checkpoints_refused == 1
        assert not (tmp_path / "evil-was-run").exists()
        assert not (await log.verify()).ok  # and the chain says the record was altered


async def test_another_configuration_replays_the_whole_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:300])
            await first.checkpoint("crash")
        changed = TABLE.model_copy(update={"camera_window_seconds": 9.0})
        with caplog.at_level(logging.INFO):
            replayed = await service(log, table=changed, checkpoint_inputs=10**9).recover()
        assert replayed == 301
        assert "configuration changed since its checkpoint" in caplog.text
        assert await service(log, checkpoint_inputs=10**9).recover() == 0


def test_where_a_device_is_plugged_in_is_no_change_of_the_table() -> None:
    def made(**device: Any) -> TableController:
        shoe = {"id": "shoe-1", "kind": "shoe", "port": "/dev/pts/3", **device}
        settings = TableSettings(id="t1", devices=[shoe])
        return TableController(settings, ruleset_from_spec(settings.ruleset))

    same = fingerprint(made())
    assert fingerprint(made(port="/dev/pts/9", baudrate=9600, options={"gap_timeout": 2.0})) == same
    assert fingerprint(made(heartbeat_timeout=9.0)) == same
    assert fingerprint(made(id="shoe-2")) != same
    assert fingerprint(made(kind="shuffler")) != same
