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
import json
import logging
import os
import pickle
import random
import sys
from collections import deque
from collections.abc import Callable
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import sqlalchemy as sa
from pydantic import BaseModel

from studio.config.models import DeviceSettings, TableSettings
from studio.controller import ControllerService, Input, TableController
from studio.controller.alerts import Alert, AlertCode
from studio.controller.checkpoint import (
    CHECKPOINT_KIND,
    CheckpointError,
    dumps,
    fingerprint,
    loads,
    seal,
)
from studio.controller.replay import TableReplay
from studio.controller.service import INPUT_KINDS
from studio.controller.table import FIRST_LOGIC, LOGIC
from studio.errors import StoreError, StudioError
from studio.rules.ruleset import ruleset_from_spec
from studio.store import EventLog, LogRecord
from studio.store.checkpoints import checkpoints
from studio.store.eventlog import chain_hash

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE, controller, feed, generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402

Play = list[dict[str, Any]]
INPUTS, _ = generate(40, seed=23)  # ~1,350 inputs


def service(
    log: EventLog, *, table: TableSettings = TABLE, key: str | None = None, **options: Any
) -> ControllerService:
    clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
    made = controller(log, clock, table=table, checkpoint_key=key, **options)
    made.test_clock = clock  # type: ignore[attr-defined]
    return made


async def play(
    service: ControllerService, inputs: Play, *, every: Callable[[int], bool] = lambda n: False
) -> None:
    """Submit ``inputs``; checkpoint after each input number ``every`` picks."""

    async def checkpoint(n: int) -> None:
        if every(n):
            await service.checkpoint("crash")

    await feed(service, inputs, service.test_clock, after_each=checkpoint)  # type: ignore[attr-defined]


async def played_and_checkpointed(log: EventLog, inputs: Play, **options: Any) -> None:
    """A run that plays ``inputs`` and takes a checkpoint at their end, then stops."""
    async with service(log, **options) as first:
        await play(first, inputs)
        await first.checkpoint("crash")


async def rebuilt(log: EventLog, *, use_checkpoint: bool) -> tuple[ControllerService, int]:
    """A controller rebuilt from the log as a start does (nothing submitted), and how many
    inputs it replayed."""
    if not use_checkpoint:
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(checkpoints))
    made = service(log, checkpoint_inputs=10**9)
    return made, await made.recover()


_ATOMS = (str, int, float, bool, type(None), bytes, Decimal, date, timedelta, tzinfo, Enum, type)


def _atom(value: Any) -> tuple[Any, ...]:
    """A scalar by type and spelling: Decimal("1.0") is not Decimal("1.00"), nor is a time
    in one time zone type the same instant in another."""
    if isinstance(value, datetime):
        return (type(value), value.isoformat(), type(value.tzinfo), value.fold)
    return (type(value), repr(value))


def assert_same(a: Any, b: Any, path: str = "state") -> None:
    """``a`` and ``b`` hold the same state all the way down: the same types, attributes
    (both ways), dict orders, scalars by spelling, and the same objects shared."""
    pairs: dict[int, int] = {}
    back: dict[int, int] = {}
    alive: list[Any] = []

    def same(a: Any, b: Any, path: str) -> None:
        if isinstance(a, _ATOMS):
            assert _atom(a) == _atom(b), f"{path}: {a!r} != {b!r}"
            return
        if isinstance(a, frozenset):
            assert type(a) is type(b) and _members(a) == _members(b), f"{path}: {a!r} != {b!r}"
            return
        if id(a) in pairs or id(b) in back:  # shared: shared alike on both sides
            assert pairs.get(id(a)) == id(b) and back.get(id(b)) == id(a), f"{path}: sharing"
            return
        pairs[id(a)], back[id(b)] = id(b), id(a)
        alive.extend((a, b))  # an id is an object's only while the object lives
        assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
        if isinstance(a, (dict, list, set, deque)) and getattr(a, "__dict__", None):
            same(vars(a), vars(b), f"{path}.__dict__")  # a container subclass's own attributes
        if isinstance(a, MappingProxyType):
            a, b = dict(a), dict(b)
        if isinstance(a, dict):
            keys = [_atom(k) for k in a], [_atom(k) for k in b]
            assert keys[0] == keys[1], f"{path}: keys {list(a)[:6]} != {list(b)[:6]}"
            for key in a:
                same(a[key], b[key], f"{path}[{key!r}]")
        elif isinstance(a, (list, tuple, deque)):
            assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
            if isinstance(a, deque):
                assert a.maxlen == b.maxlen, f"{path}: maxlen {a.maxlen} != {b.maxlen}"
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                same(x, y, f"{path}[{i}]")
        elif isinstance(a, set):
            # By members only: the table asks a set what it holds, never its order.
            assert _members(a) == _members(b), f"{path}: {a} != {b}"
        else:
            mine, theirs = _attributes(a), _attributes(b)
            assert list(mine) == list(theirs), f"{path}: attributes {set(mine) ^ set(theirs)}"
            assert mine, f"{path}: nothing to compare in a {type(a).__name__}"
            for name in mine:
                same(mine[name], theirs[name], f"{path}.{name}")

    same(a, b, path)


def _members(items: set[Any] | frozenset[Any]) -> list[str]:
    """A set's members by type and spelling ({1} is not {1.0}, nor {True})."""
    return sorted(repr(_atom(item)) for item in items)


def _attributes(obj: Any) -> dict[str, Any]:
    found = dict(sorted(getattr(obj, "__dict__", {}).items()))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found[name] = getattr(obj, name)
    if isinstance(obj, BaseModel):
        found["(fields set)"] = sorted(obj.model_fields_set)
        found["(private)"] = obj.__pydantic_private__
    return found


def assert_same_tables(a: ControllerService, b: ControllerService) -> None:
    def state(c: ControllerService) -> tuple[Any, ...]:
        return c.tables["crash"], c._trackers["crash"], c._identities["crash"]

    assert_same(state(a), state(b), "(table, tracker, identities)")


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
        assert (await log.verify()).ok


async def test_a_table_restored_from_a_checkpoint_plays_on_as_the_whole_log_would(
    tmp_path: Path,
) -> None:
    half = len(INPUTS) // 2
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:half])
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
        # The replay stands at the last record walked: the first run's clean stop
        # (``controller.stopped``, logged after its last input since 2026-12-07).
        (last_input,) = await log.read(kinds=INPUT_KINDS, descending=True, limit=1)
        (stopped,) = await log.read(kinds=["controller.stopped"])
        assert stopped.id == last_input.id + 1
        assert record.payload["through"] == stopped.id


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


async def _rewritten(log: EventLog, record_id: int, payload: str) -> None:
    """Set a record's payload, and hash it and every record after it again, as someone who
    can write the database can: the chain links (a start checks the chain of what it
    replays, and refuses a record changed without its hash: tests/controller/
    test_controller_start_chain.py), and the checks after it must refuse the record."""
    async with log.db.engine.begin() as conn:
        query = sa.select(log.table).where(log.table.c.id >= record_id).order_by(log.table.c.id)
        rows = (await conn.execute(query)).all()
        prev = rows[0].prev_hash
        for row in rows:
            body = payload if row.id == record_id else row.payload
            digest = chain_hash(prev, row.id, row.ts, row.table_id, row.round_id, row.kind, body)
            values = {"payload": body, "prev_hash": prev, "hash": digest}
            await conn.execute(sa.update(log.table).where(log.table.c.id == row.id).values(values))
            prev = digest


async def _tamper(log: EventLog, change: Callable[[bytes], bytes]) -> None:
    async with log.db.engine.begin() as conn:
        row = (await conn.execute(sa.select(checkpoints))).one()
        await conn.execute(sa.update(checkpoints).values(state=change(bytes(row.state))))


async def test_an_altered_checkpoint_is_not_read_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:400])
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
        await played_and_checkpointed(log, INPUTS[:200])
        # Written by someone who could also write its record's digest: still not run.
        await _tamper(log, lambda state: evil)
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        payload = {**record.payload, "digest": unkeyed_seal(evil, record.payload)}
        await _rewritten(log, record.id, json.dumps(payload))
        assert (await log.verify()).ok  # rehashed: the chain cannot tell
        with caplog.at_level(logging.ERROR):
            restored, _ = await rebuilt(log, use_checkpoint=True)
        assert "may not build" in caplog.text
        assert restored.stats.checkpoints_refused == 1
        assert not (tmp_path / "evil-was-run").exists()


async def test_another_configuration_replays_the_whole_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:300])
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


DEVICES = [
    DeviceSettings(id="shoe", kind="shoe", port="/dev/ttyUSB0"),
    DeviceSettings(id="cam", kind="camera"),
    DeviceSettings(id="shuf", kind="shuffler"),
    DeviceSettings(id="cut", kind="cutcard"),
]
WITH_DEVICES = TABLE.model_copy(update={"devices": DEVICES})


def logged(seed: int, *, restarts: bool) -> list[LogRecord]:
    """The harness's play as log records; ``restarts``: with starts of other logics and
    settings, and device availability, health, gaps and conflicts between its inputs."""
    rng = random.Random(seed)
    inputs, _ = generate(30, seed=seed)
    made: list[tuple[str, dict[str, Any], str]] = []
    health = 0
    for n, item in enumerate(inputs):
        ts = item["ts"]
        if n == 0 or (restarts and rng.random() < 0.004):
            logic = rng.choice([LOGIC, LOGIC, 12, 4]) if n else 9
            table = {"single_source": rng.random() < 0.2, "camera_window_seconds": 2.5}
            made.append(("controller.started", {"logic": logic, "table": table}, ts))
        draw = rng.random() if restarts else 1.0
        device = rng.choice(["shoe", "cam", "shuf", "cut", "ghost"])
        if draw < 0.01:
            state = rng.choice(["online", "offline"])
            made.append(("device.availability", {"device": device, "state": state}, ts))
        elif draw < 0.02:
            health += 1
            status = rng.choice(["ok", "ok", "degraded"])
            data = {"device": device, "seq": health, "status": status, "ts": ts}
            made.append(("device.health", data, ts))
        elif draw < 0.022:
            made.append(
                ("device.gap", {"device": "cam", "seqs": [100_000 + n], "requests": 10}, ts)
            )
        elif draw < 0.024:
            conflict = {"device": "shoe", "seq": 1, "logged": "x", "received": "y", "last": 5}
            made.append(("device.conflict", conflict, ts))
        made.append((item["kind"], item["data"], ts))
    return [
        LogRecord(n, ts, "crash", None, kind, json.loads(json.dumps(data)), "", "")
        for n, (kind, data, ts) in enumerate(made, 1)
    ]


def replay_of(settings: TableSettings) -> TableReplay:
    table = TableController(settings, ruleset_from_spec(settings.ruleset), round_gap=1.0)
    table.logic = FIRST_LOGIC
    return TableReplay(table)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("seed", "settings", "restarts"),
    [(23, TABLE, False), (11, WITH_DEVICES, True), (12, WITH_DEVICES, True)],
)
def test_a_checkpoint_at_any_point_reads_back_and_plays_on_as_the_whole_log(
    seed: int, settings: TableSettings, restarts: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, a checkpoint taken just after an alert was concealed could not be read back
    (pydantic's own time zone in the outputs it kept): a review, 26 of 100 points of such a
    play; every start then replayed the whole log, and said it was altered.

    Every point is written; every point of the first 100 records is read back and held
    against the whole state, then every third (reading a point back and comparing it costs
    as much as the rest of the test: ~40 ms a point late in the log, on CI's two cores)."""
    caplog.set_level(logging.CRITICAL, "studio.controller.replay")  # the script's refusals
    records = logged(seed, restarts=restarts)
    whole = replay_of(settings)
    points: dict[int, bytes] = {}
    for n, record in enumerate(records, 1):
        whole.apply(record)
        state = dumps(whole)
        if n <= 100 or n % 3 == seed % 3:
            assert_same(loads(state), whole, f"after record {n}")
        if n % 41 == 0:
            points[n] = state
    for n, state in points.items():
        restored = loads(state)
        for record in records[n:]:
            restored.apply(record)
        assert_same(restored, whole, f"from record {n}")


def test_where_a_device_is_plugged_in_is_taken_from_the_configuration() -> None:
    records = logged(11, restarts=True)
    checkpoint = replay_of(WITH_DEVICES)
    for record in records[:400]:
        checkpoint.apply(record)
    moved = WITH_DEVICES.model_copy(
        update={"devices": [DEVICES[0].model_copy(update={"port": "/dev/ttyUSB1"}), *DEVICES[1:]]}
    )
    whole = replay_of(moved)
    for record in records[:400]:
        whole.apply(record)
    restored = loads(dumps(checkpoint))
    restored.table.plugged_in(moved)
    assert_same(restored, whole)
    assert restored.table.settings.devices[0].port == "/dev/ttyUSB1"


def test_a_checkpoint_changes_no_class_nor_enum_member() -> None:
    """A review's forged checkpoints: one set ``Alert.pauses`` to False for the whole process
    (an open mismatch then paused nothing), one changed ``AlertCode.CARD_MISMATCH``'s value
    even as the checkpoint was refused."""
    pauses = Alert.__dict__["pauses"]
    on_class = b"\x80\x02cstudio.controller.alerts\nAlert\nN}X\x06\x00\x00\x00pauses\x89s\x86b."
    on_member = (
        b"\x80\x02cstudio.controller.alerts\nAlertCode\nX\r\x00\x00\x00card_mismatch\x85R"
        b"N}X\x07\x00\x00\x00_value_X\x07\x00\x00\x00nothings\x86b."
    )
    try:
        with pytest.raises(CheckpointError, match="may not change"):
            loads(on_class)
        assert Alert.__dict__["pauses"] is pauses
        with pytest.raises(CheckpointError, match="may not change"):
            loads(on_member)
        assert AlertCode.CARD_MISMATCH.value == "card_mismatch"
    finally:  # (on the code before, for the tests after this one)
        Alert.pauses = pauses  # type: ignore[method-assign]
        AlertCode.CARD_MISMATCH._value_ = "card_mismatch"


KEY = "k" * 32


def unkeyed_seal(state: bytes, made: dict[str, Any]) -> str:
    """The seal anyone who can read the database can make for ``state``, without the key."""
    return seal(state, None, table="crash", through=made["through"], made_for=made["fingerprint"])


async def test_a_signed_checkpoint_is_taken_only_under_its_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A review forged a checkpoint by appending a record of its own at the log's head, its
    digest matching: the chain verified and the start took it. Under a key it cannot."""
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:300], key=KEY)
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        assert record.payload["digest"].startswith("hmac:")
        assert await service(log, key=KEY, checkpoint_inputs=10**9).recover() == 0
        for other in (None, "x" * 32):
            with caplog.at_level(logging.ERROR):
                refused = service(log, key=other, checkpoint_inputs=10**9)
                assert await refused.recover() == 301
            assert refused.stats.checkpoints_refused == 1
            assert "signed with another checkpoint key or none" in caplog.text
        # The forgery: a state of one's own, its record appended at the head with its
        # (unkeyed) digest, the table's row pointed at it.
        async with log.db.engine.begin() as conn:
            row = (await conn.execute(sa.select(checkpoints))).one()
        forged = bytes(row.state).replace(b"crash-R", b"crash-Q", 1)
        payload = {**record.payload, "digest": unkeyed_seal(forged, record.payload)}
        appended = await log.append("crash", CHECKPOINT_KIND, payload)
        async with log.db.engine.begin() as conn:
            values = {"record_id": appended.id, "state": forged}
            await conn.execute(sa.update(checkpoints).values(**values))
        assert (await log.verify()).ok  # the chain cannot tell
        taken = service(log, checkpoint_inputs=10**9)
        # Without a key the forged state is taken; this one renamed the last round, so its
        # replay does not end on the round event the log ends on, and the start stops (a
        # forgery that keeps the last event as logged is not told: the key is the guard).
        with pytest.raises(
            StoreError, match="ends on round event #318 card_dealt of round crash-R10"
        ):
            await taken.recover()
        assert taken.stats.checkpoints_refused == 0
        keyed = service(log, key=KEY, checkpoint_inputs=10**9)
        assert await keyed.recover() == 301
        assert keyed.stats.checkpoints_refused == 1


async def test_an_old_signed_checkpoint_is_not_taken_under_a_newer_record(tmp_path: Path) -> None:
    """A review: the signature covered the state only, so a state signed before the rule set
    changed, put under a copy of the new checkpoint's record, was taken, and the table
    played on under the old rules. It covers the table, the record and the fingerprint."""
    slower = TABLE.model_copy(update={"ruleset": {"preset": "clubhouse"}})
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:300], key=KEY)
        async with log.db.engine.begin() as conn:
            old_state = bytes((await conn.execute(sa.select(checkpoints))).one().state)
        renewed = service(log, table=slower, key=KEY, checkpoint_inputs=1)
        assert await renewed.recover() == 301  # another rule set: the whole log, signed anew
        new_record = (await log.read(kinds=[CHECKPOINT_KIND], descending=True, limit=1))[0]
        copied = await log.append("crash", CHECKPOINT_KIND, new_record.payload)
        async with log.db.engine.begin() as conn:
            values = {"record_id": copied.id, "state": old_state}
            await conn.execute(sa.update(checkpoints).values(**values))
        restarted = service(log, table=slower, key=KEY, checkpoint_inputs=10**9)
        assert await restarted.recover() == 301
        assert restarted.stats.checkpoints_refused == 1


async def test_a_record_s_seal_of_any_kind_only_has_the_whole_log_replayed(
    tmp_path: Path,
) -> None:
    """A review: a seal with a character outside ASCII made the comparison raise, and the
    controller could not start at all."""
    async with database("sqlite", tmp_path) as log:
        await played_and_checkpointed(log, INPUTS[:200])
        (record,) = await log.read(kinds=[CHECKPOINT_KIND])
        for seal_value in ("é" * 64, 12, None, ["x"]):
            payload = json.dumps({**record.payload, "digest": seal_value})
            await _rewritten(log, record.id, payload)
            restarted = service(log, checkpoint_inputs=10**9)
            assert await restarted.recover() == 201
            assert restarted.stats.checkpoints_refused == 1
