"""Every time of contract v1 goes out as RFC 3339 in UTC with milliseconds and `Z`
(docs/protocol.md). `RoundState.deadline` went out as pydantic writes a datetime
(`2026-12-06T13:05:14.601888Z`, microseconds): only `ts` (and `received_at`,
`last_seen`) had the contract's serializer (a review)."""

from __future__ import annotations

import inspect
import json
import re
import typing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from pydantic import AwareDatetime, BaseModel

from studio.config import StudioConfig, TableSettings
from studio.contract import messages, rounds
from studio.contract.rounds import RoundState
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

RFC3339_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
WHEN = datetime(2026, 12, 6, 14, 5, 14, 601888, tzinfo=timezone(timedelta(hours=1)))


def _state(**fields: object) -> RoundState:
    return RoundState(table="bj1", round_id="r1", seq=3, ts=WHEN, phase="betting", **fields)


def test_a_deadline_is_written_with_milliseconds_in_utc() -> None:
    state = _state(deadline=WHEN)
    assert state.model_dump(mode="json")["deadline"] == "2026-12-06T13:05:14.601Z"
    assert json.loads(state.model_dump_json())["deadline"] == "2026-12-06T13:05:14.601Z"
    assert state.model_dump(mode="json")["ts"] == "2026-12-06T13:05:14.601Z"
    assert _state().model_dump(mode="json")["deadline"] is None
    assert json.loads(_state(deadline=None).model_dump_json())["deadline"] is None


def _has_datetime(annotation: object) -> bool:
    if annotation in (datetime, AwareDatetime):
        return True
    return any(_has_datetime(a) for a in typing.get_args(annotation))


def test_every_time_field_of_the_contract_has_the_contracts_serializer() -> None:
    # Not only the deadline: any time field a model of studio.contract has, or gains.
    unserialized, checked = [], 0
    for module in (messages, rounds):
        for model in vars(module).values():
            if not (inspect.isclass(model) and issubclass(model, BaseModel)):
                continue
            serialized: set[str] = set()
            for decorator in model.__pydantic_decorators__.field_serializers.values():
                serialized.update(decorator.info.fields)
            for name, field in model.model_fields.items():
                if _has_datetime(field.annotation):
                    checked += 1
                    if name not in serialized:
                        unserialized.append(f"{model.__name__}.{name}")
    assert unserialized == []
    assert checked >= 10  # the times were found (AwareDatetime is no datetime subclass)


async def test_the_controllers_state_has_a_deadline_in_milliseconds(tmp_path: Path) -> None:
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse", single_source=True)])
    census = {r: 32 for r in "A23456789TJQK"}
    async with Database(f"sqlite:///{tmp_path}/studio.db") as db:
        log, fanout = EventLog(db), Fanout(bus=None)
        clock = iter(WHEN + timedelta(microseconds=n) for n in range(10_000))
        async with ControllerService(
            config, None, log, fanout, timers=False, clock=lambda: next(clock)
        ) as service:
            for kind, device, event, data in [
                ("shuffler.event", "shuf", "shuffle_complete", {"count": 416, "census": census}),
                ("shoe.event", "shoe", "shoe_loaded", {"shoe": "S1"}),
            ]:
                body = {"device": device, "seq": 1, "ts": "2026-12-06T12:00:00Z", "event": event}
                await service.submit("bj1", kind, {**body, "data": data})
            table = service.tables["bj1"]
            assert table.phase == "betting" and table.betting_deadline is not None
            assert table.betting_deadline.microsecond % 1000 != 0  # not whole ms: a real test
            deadline = table.state().model_dump(mode="json")["deadline"]
            assert RFC3339_MS.fullmatch(deadline), deadline
            assert datetime.fromisoformat(deadline) > WHEN.astimezone(UTC)
            assert RFC3339_MS.fullmatch(table.summary()["deadline"])
