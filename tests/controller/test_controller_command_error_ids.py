"""A ``game/command_errors`` notice for every malformed command, whatever its ``id`` holds,
and the count of notices not sent kept until one that says it is.

A review: ``{"id": "\\ud800", "type": "bet"}`` (JSON, a lone surrogate in the id) got no
notice: the id was echoed, the notice could not be written as UTF-8, the publish raised
(an ERROR traceback), and the table's pending ``suppressed`` count, taken before the
publish, was lost with it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from test_controller_command_errors import (
    BET,
    Raw,
    _controller,
    _errors_topic,
    _notices,
    _subscribed,
)

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract.topics import Topics
from studio.controller import ControllerService
from studio.controller.commands import command_id
from studio.errors import BusError


def test_a_command_id_that_cannot_be_written_as_utf8_is_no_command_id() -> None:
    assert command_id("\ud800") is None
    assert command_id("b-\udfff-1") is None
    assert command_id("b-\U0001f0a1") == "b-\U0001f0a1"  # a whole character outside the BMP
    assert command_id("é" * 128) == "é" * 128


async def _malformed_seen(service: ControllerService, topic: str, count: int) -> None:
    assert service.bus is not None
    async with asyncio.timeout(10):
        while service.bus.stats.malformed[topic] < count:
            await asyncio.sleep(0.01)


async def _flood(
    service: ControllerService, platform: MessageBus, table_id: str, count: int
) -> None:
    """``count`` garbage commands, the first answered, the others suppressed (the budget
    is 1 and refills at 0.01 a second)."""
    commands = Topics(table_id).game_commands
    assert service.bus is not None
    before = service.bus.stats.malformed[commands]
    for n in range(count):
        await platform.publish(commands, json.dumps({"id": f"g{before + n}", "garbage": 1}))
    await _malformed_seen(service, commands, before + count)


async def _failed(failures: list[Any]) -> None:
    async with asyncio.timeout(5):
        while not failures:
            await asyncio.sleep(0.01)


def _refill(service: ControllerService, table_id: str) -> None:
    # The budget as at the start (1 notice), not waited for: at 0.01 a second it is 100 s.
    service._error_budget.pop(table_id)


async def test_a_lone_surrogate_id_is_answered_with_a_null_id_and_the_count_it_carries(
    broker: BrokerSettings, tmp_path: Path, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    commands = Topics(table_id).game_commands
    caplog.set_level(logging.WARNING)
    async with _controller(broker, tmp_path, table_id, command_errors_per_second=0.01) as (
        service,
        platform,
        _,
    ):
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            await _flood(service, platform, table_id, 3)
            (first,) = await _notices(sub, 1)
            assert (first["id"], first["suppressed"]) == ("g0", 0)
            assert service.stats.command_errors_suppressed == 2
            _refill(service, table_id)
            await platform.publish(commands, b'{"id": "\\ud800", "type": "bet"}')
            (notice,) = await _notices(sub, 1)
            assert (notice["id"], notice["type"], notice["suppressed"]) == (None, "bet", 2)
            # Inside a longer id, and in a command that is otherwise one: the same.
            body = json.dumps({**BET, "id": "b-\ud800-1"}).encode()
            assert b"\\ud800" in body
            _refill(service, table_id)
            await platform.publish(commands, body)
            (notice,) = await _notices(sub, 1)
            assert (notice["id"], notice["type"], notice["suppressed"]) == (None, "bet", 0)
            assert service.stats.command_errors == 3
    failed = [r for r in caplog.records if "failed" in r.getMessage()]
    assert failed == [], [r.getMessage() for r in failed]


async def test_a_notice_that_is_not_sent_leaves_the_count_for_the_next(
    broker: BrokerSettings, tmp_path: Path, table_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _controller(broker, tmp_path, table_id, command_errors_per_second=0.01) as (
        service,
        platform,
        _,
    ):
        real = service.fanout.command_error
        failures: list[Any] = []

        async def fails_once(notice: Any) -> None:
            if not failures:
                failures.append(notice)
                raise BusError("the broker refused it")
            await real(notice)

        monkeypatch.setattr(service.fanout, "command_error", fails_once)
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            await _flood(service, platform, table_id, 1)  # its answer fails
            await _failed(failures)
            _refill(service, table_id)
            await _flood(service, platform, table_id, 3)  # g1 answered, g2 and g3 not
            (notice,) = await _notices(sub, 1)
            assert (notice["id"], notice["suppressed"]) == ("g1", 0)
            # The count is taken by the notice that says it, not by one that failed.
            monkeypatch.setattr(service.fanout, "command_error", fails_once)
            failures.clear()
            _refill(service, table_id)
            await _flood(service, platform, table_id, 1)  # g4: its answer fails
            await _failed(failures)
            assert failures[0].suppressed == 2
            _refill(service, table_id)
            await _flood(service, platform, table_id, 1)
            (notice,) = await _notices(sub, 1)
            assert (notice["id"], notice["suppressed"]) == ("g5", 2)
            assert service.stats.command_errors_suppressed == 2
            assert service.stats.command_errors == 2  # those answered: not g0 nor g4


async def test_the_next_notice_names_the_ids_of_those_held_back_up_to_a_bound(
    broker: BrokerSettings, tmp_path: Path, table_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An integrator's review: 31 malformed bets got 27 notices, the other 4 only counted in
    later notices' ``suppressed``; a command held back looked like one lost."""
    monkeypatch.setattr("studio.controller.service.SUPPRESSED_IDS_NAMED", 3, raising=False)
    commands = Topics(table_id).game_commands
    async with _controller(broker, tmp_path, table_id, command_errors_per_second=0.01) as (
        service,
        platform,
        _,
    ):
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            held = [b'{"id": "h0", "x": 1}', b'{"id": "h1", "x": 1}', b"nonsense"]
            held += [b'{"id": "h0", "x": 2}', b'{"id": "h2", "x": 1}', b'{"id": "h3", "x": 1}']
            for payload in [b'{"id": "a0", "x": 1}', *held]:
                await platform.publish(commands, payload)
            await _malformed_seen(service, commands, 7)
            (first,) = await _notices(sub, 1)
            assert (first["id"], first["suppressed"], first["suppressed_ids"]) == ("a0", 0, [])
            _refill(service, table_id)
            await platform.publish(commands, b'{"id": "a1", "x": 1}')
            (notice,) = await _notices(sub, 1)
            # Before: {"suppressed": 6} and no ids. Each id once, in order, the first 3; a
            # message with no id (nonsense) and those past the bound (h3) only counted.
            assert (notice["id"], notice["suppressed"]) == ("a1", 6)
            assert notice["suppressed_ids"] == ["h0", "h1", "h2"]
            _refill(service, table_id)
            await platform.publish(commands, b'{"id": "a2", "x": 1}')
            (notice,) = await _notices(sub, 1)
            assert (notice["id"], notice["suppressed"], notice["suppressed_ids"]) == ("a2", 0, [])
