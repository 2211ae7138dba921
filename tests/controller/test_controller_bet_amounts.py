"""What a bet's amounts become: refused when they are not money a table takes, and an
accepted bet says what the rule set took (rounded down at the cent by seed 004).

A side bet of 1e27 passed the command's validation (only the stake was bounded), and
rounding it to cents raised ``decimal.InvalidOperation`` in the rules engine: not a
refusal but an exception that ended the controller's command consumer. A side bet of
0.001 was dropped, the bet accepted without it and the platform not told.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bus_support import answered, controller_on_bus
from test_controller_table import Driver

from studio.config import BrokerSettings
from studio.contract.topics import Topics
from studio.controller import ControllerService, TableController
from studio.controller.table import InputFailed
from studio.store import Database
from studio.store.game_commands import answer_of


async def _open_betting(service: ControllerService, table_id: str) -> None:
    census = {r: 32 for r in "A23456789TJQK"}
    shuffled = {"count": 416, "census": census}
    for kind, event, data in [
        ("shuffler.event", "shuffle_complete", shuffled),
        ("shoe.event", "shoe_loaded", {"shoe": "S1"}),
    ]:
        device = "shuf" if kind == "shuffler.event" else "shoe"
        body = {"device": device, "seq": 1, "ts": "2026-12-05T12:00:00+00:00", "event": event}
        await service.submit(table_id, kind, {**body, "data": data})
    assert service.tables[table_id].phase == "betting"


def _betting(d: Driver) -> None:
    d.shuffle()
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"


def _accepted(d: Driver, cid: str) -> dict[str, Any]:
    return next(
        e["data"] for e in d.events if e["type"] == "command_accepted" and e["data"]["id"] == cid
    )


def test_an_accepted_bet_says_what_the_rule_set_took() -> None:
    d = Driver(single_source=True)
    _betting(d)
    d.bet(1, "p1", "10.009", side_bets={"perfect_pairs": "1.009", "21+3": "0"})
    accepted = _accepted(d, "bet-1-p1")
    assert accepted["taken"] == {"stake": "10.00", "side_bets": {"perfect_pairs": "1.00"}}
    assert accepted["command"]["stake"] == "10.009"  # what was sent, as before
    answer = answer_of("command_accepted", accepted)  # what /commands answers
    assert answer == {"accepted": True, "taken": accepted["taken"]}


def test_a_side_bet_that_rounds_to_nothing_or_cannot_be_rounded_is_refused() -> None:
    d = Driver(single_source=True)
    _betting(d)
    d.bet(1, "p1", "10", cid="tiny", side_bets={"perfect_pairs": "0.009"})
    assert "'perfect_pairs' of 0.00 (0.009 asked) outside its limits" in d.rejected("tiny")
    d.bet(1, "p1", "10", cid="huge", side_bets={"perfect_pairs": "1e27"})
    assert "not an amount of money" in d.rejected("huge")
    d.bet(1, "p1", "10", cid="fine")
    assert _accepted(d, "fine")["taken"]["stake"] == "10.00"


def test_a_log_of_logic_13_replays_the_dropped_side_bet_as_it_was() -> None:
    d = Driver(single_source=True)
    d.table.logic = 13  # the logic a replay runs for a run logged with it
    _betting(d)
    d.bet(1, "p1", "10", cid="tiny", side_bets={"perfect_pairs": "0.009"})
    assert "taken" not in _accepted(d, "tiny")
    assert d.table.engine is not None
    assert d.table.engine.round.boxes[1].wagers[0].side_bets == {}


async def test_a_command_the_engine_refuses_over_mqtt_leaves_the_consumer_running(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    async with controller_on_bus(broker, database, table_id) as (service, platform):
        await _open_betting(service, table_id)
        bet = {"type": "bet", "seat": 1, "player": "p1", "stake": "10"}
        topic = Topics(table_id).game_commands
        # Since 2026-12-07 1e27 is no command (a side bet has at most 12 digits, as the
        # stake): a command_errors notice, its id free. 0.009 is refused by the table.
        await platform.publish(
            topic, json.dumps({**bet, "id": "huge", "side_bets": {"21+3": "1e27"}})
        )
        await platform.publish(
            topic, json.dumps({**bet, "id": "tiny", "side_bets": {"21+3": "0.009"}})
        )
        await platform.publish(topic, json.dumps({**bet, "id": "fine"}))
        assert (await answered(service, table_id, "fine"))["accepted"] is True
        assert (await answered(service, table_id, "tiny"))["accepted"] is False
        assert await service.commands.answer(table_id, "huge") is None
        assert all(not task.done() for task in service._tasks)


async def test_an_input_that_fails_for_a_fault_of_ours_is_not_applied_and_the_rest_go_on(
    broker: BrokerSettings, database: Database, table_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever the next such fault is, one input must not end every table's consumers.
    real = TableController._apply_command

    def faulty(self: TableController, command: Any) -> dict[str, Any]:
        if command.id.startswith("boom"):
            raise ArithmeticError("a fault of ours")
        return real(self, command)

    monkeypatch.setattr(TableController, "_apply_command", faulty)
    async with controller_on_bus(broker, database, table_id) as (service, platform):
        await _open_betting(service, table_id)
        bet = {"type": "bet", "seat": 1, "player": "p1", "stake": "10"}
        with pytest.raises(InputFailed, match="a fault of ours"):
            await service.submit_command(table_id, {**bet, "id": "boom-rest"})
        topic = Topics(table_id).game_commands
        await platform.publish(topic, json.dumps({**bet, "id": "boom-mqtt"}))
        await platform.publish(topic, json.dumps({**bet, "id": "fine"}))
        assert (await answered(service, table_id, "fine"))["accepted"] is True
        assert await service.commands.answer(table_id, "boom-rest") is None
        assert await service.commands.answer(table_id, "boom-mqtt") is None
        assert all(not task.done() for task in service._tasks)
        logged = [r.payload.get("id") for r in await service.log.read(table_id=table_id)]
        assert "fine" in logged
        assert not {"boom-rest", "boom-mqtt"} & set(logged)


def test_a_negative_or_unknown_side_bet_is_refused_not_dropped() -> None:
    # The controller dropped side bets of 0 or less before the engine saw them, so
    # {"perfect_pairs": "-3"} or {"nonexistent": "-3"} was accepted as a plain bet.
    d = Driver(single_source=True)
    _betting(d)
    d.bet(1, "p1", "10", cid="neg", side_bets={"perfect_pairs": "-3"})
    assert "not an amount of money" in d.rejected("neg")
    d.bet(1, "p1", "10", cid="ghost", side_bets={"nonexistent": "-3"})
    assert "not an amount of money" in d.rejected("ghost")
    d.bet(1, "p1", "10", cid="named", side_bets={"nonexistent": "1"})
    assert "unknown side bet 'nonexistent'" in d.rejected("named")
    d.bet(1, "p1", "10", cid="long", side_bets={"x" * 5000: "1"})
    assert len(d.rejected("long")) < 80  # the name is cut, not echoed whole
    d.bet(1, "p1", "10", cid="zero", side_bets={"perfect_pairs": "-0.00"})
    assert _accepted(d, "zero")["taken"]["side_bets"] == {}
    old = Driver(single_source=True)
    old.table.logic = 13
    _betting(old)
    old.bet(1, "p1", "10", cid="neg", side_bets={"perfect_pairs": "-3"})
    assert _accepted(old, "neg")["command"]["side_bets"] == {"perfect_pairs": "-3"}


def test_a_side_bet_of_zero_is_no_side_bet_whatever_its_name() -> None:
    # A platform that sends every side bet's field, zero where none is placed: up to logic
    # 13 the controller dropped them; the engine must not refuse a bet for them.
    d = Driver(single_source=True)
    _betting(d)
    zeros = {"lucky_lucky": "0", "nonexistent": "0.00", "perfect_pairs": "0"}
    d.bet(1, "p1", "10", cid="zeros", side_bets=zeros)
    assert _accepted(d, "zeros")["taken"] == {"stake": "10.00", "side_bets": {}}
