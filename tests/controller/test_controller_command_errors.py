"""A message on ``game/commands`` that is no game command is answered on MQTT.

It was only logged and counted as malformed (``MessageBus.stats.malformed``): a platform
got no answer at all, could not tell a refused bet from a lost one, and sent it again for
ever (REST answers such a body 422). Now the controller publishes a ``CommandError``
notice on ``game/command_errors``: not a round event, not logged, the id not taken, and
at most so many a second per table.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import RootModel

from studio.bus import MessageBus, Subscription
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract.topics import Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout

BET = {"type": "bet", "player": "p1", "seat": 1, "stake": "10"}


class Raw(RootModel[dict[str, Any]]):
    """A notice as sent on the wire (its keys and their JSON form)."""


def _errors_topic(table_id: str) -> str:
    # Spelled out: the topic the platform subscribes to, as docs/protocol.md names it.
    return f"studio/v1/tables/{table_id}/game/command_errors"


@asynccontextmanager
async def _controller(
    broker: BrokerSettings, tmp_path: Path, table_id: str, **options: Any
) -> AsyncIterator[tuple[ControllerService, MessageBus, EventLog]]:
    config = StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, ruleset="clubhouse", single_source=True)],
    )
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"ctl-{table_id}") as bus,
        MessageBus(broker, f"platform-{table_id}") as platform,
    ):
        log = EventLog(db)
        async with ControllerService(
            config, bus, log, Fanout(bus), timers=False, **options
        ) as service:
            await platform.wait_connected()
            yield service, platform, log


async def _open_betting(service: ControllerService, table_id: str) -> None:
    census = {r: 32 for r in "A23456789TJQK"}
    for kind, device, event, data in [
        ("shuffler.event", "shuf", "shuffle_complete", {"count": 416, "census": census}),
        ("shoe.event", "shoe", "shoe_loaded", {"shoe": "S1"}),
    ]:
        body = {"device": device, "seq": 1, "ts": "2026-12-06T12:00:00+00:00", "event": event}
        await service.submit(table_id, kind, {**body, "data": data})
    assert service.tables[table_id].phase == "betting"


async def _subscribed(service: ControllerService) -> None:
    """Until the controller's subscriptions are up (it subscribes in tasks)."""
    await asyncio.wait_for(service.listening.wait(), 20)


async def _notices(sub: Subscription[Raw], count: int, wait: float = 5.0) -> list[dict[str, Any]]:
    got = []
    async with asyncio.timeout(wait):
        while len(got) < count:
            received = await sub.get()
            assert received.retain is False
            got.append(received.payload.root)
    return got


async def test_a_malformed_command_is_answered_and_its_id_stays_free(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    commands = Topics(table_id).game_commands
    sent: list[tuple[bytes, str | None, str | None, str]] = [
        # (payload, the notice's id, its type, a word its reason must hold)
        (
            json.dumps({**BET, "id": "c-extra", "colour": "red"}).encode(),
            "c-extra",
            "bet",
            "colour",
        ),
        (json.dumps({**BET, "id": "c-seat", "seat": "3"}).encode(), "c-seat", "bet", "seat"),
        (json.dumps({**BET, "id": "c-neg", "stake": "-5"}).encode(), "c-neg", "bet", "stake"),
        (
            json.dumps({"id": "c-miss", "type": "decision", "player": "p1", "seat": 1}).encode(),
            "c-miss",
            "decision",
            "action",
        ),
        (
            json.dumps({"id": "c-type", "type": "raise", "player": "p1"}).encode(),
            "c-type",
            None,  # a type no command has is not echoed
            "type",
        ),
        (json.dumps({**BET, "id": 17}).encode(), None, "bet", "id"),
        (b'{"id": "c-json", "type": "bet", ', None, None, "JSON"),
        (b"\xff\xfe not utf-8", None, None, "JSON"),
        (json.dumps([{**BET, "id": "c-list"}]).encode(), None, None, "object"),
        # Too large to be read for its id (16 KiB at most).
        (json.dumps({**BET, "id": "c-big", "pad": "x" * 20_000}).encode(), None, None, "pad"),
    ]
    async with _controller(broker, tmp_path, table_id) as (service, platform, log):
        await _open_betting(service, table_id)
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            for payload, *_ in sent:
                await platform.publish(commands, payload)
            notices = await _notices(sub, len(sent))
            assert service.bus is not None
            assert service.bus.stats.malformed[commands] == len(sent)  # still counted
            for notice, (_, ident, kind, word) in zip(notices, sent, strict=True):
                assert set(notice) == {
                    "table",
                    "ts",
                    "id",
                    "type",
                    "reason",
                    "received_at",
                    "suppressed",
                    "suppressed_ids",
                }
                assert (notice["table"], notice["id"], notice["type"]) == (table_id, ident, kind)
                assert word in notice["reason"], notice
                assert len(notice["reason"]) <= 500
                assert "Traceback" not in notice["reason"]
                assert "x" * 100 not in notice["reason"]
                assert notice["received_at"].endswith("Z") and notice["ts"].endswith("Z")
                assert (notice["suppressed"], notice["suppressed_ids"]) == (0, [])
            assert "seat: Input should be a valid integer" in notices[1]["reason"]
            assert service.stats.command_errors == len(sent)
            assert service.stats.command_errors_suppressed == 0

            # Nothing was applied or logged, and the id is not taken: a corrected command
            # may use it (and is answered as any command).
            assert await log.read(table_id=table_id, kinds=["game.command"]) == []
            assert await service.commands.answer(table_id, "c-seat") is None
            await platform.publish(commands, json.dumps({**BET, "id": "c-seat"}))
            async with asyncio.timeout(10):
                while (answer := await service.commands.answer(table_id, "c-seat")) is None:
                    await asyncio.sleep(0.02)
            assert answer["accepted"] is True
            logged = await log.read(table_id=table_id, kinds=["game.command"])
            assert [record.payload["id"] for record in logged] == ["c-seat"]
            # No notice for a command that is one, refused or not.
            await asyncio.sleep(0.3)
            assert sub._queue.empty()


async def test_notices_are_limited_per_table_and_the_rest_counted(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    commands = Topics(table_id).game_commands
    flood = 40
    async with _controller(broker, tmp_path, table_id, command_errors_per_second=3.0) as (
        service,
        platform,
        _,
    ):
        assert service.bus is not None
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            started = time.monotonic()
            for n in range(flood):
                await platform.publish(commands, f'{{"id": "g{n}", "garbage": true}}')
            async with asyncio.timeout(10):
                while service.bus.stats.malformed[commands] < flood:
                    await asyncio.sleep(0.01)
            elapsed = time.monotonic() - started
            stats = service.stats
            assert stats.command_errors + stats.command_errors_suppressed == flood
            # A burst of 3, then 3 a second.
            assert 3 <= stats.command_errors <= 3 + 3 * elapsed + 1, (stats, elapsed)
            assert stats.command_errors_suppressed >= flood - 4 - 3 * elapsed
            notices = await _notices(sub, stats.command_errors)
            assert [n["id"] for n in notices[:3]] == ["g0", "g1", "g2"]
            suppressed = stats.command_errors_suppressed - sum(n["suppressed"] for n in notices)

            # Once the budget has refilled, the next notice says how many were not sent.
            await asyncio.sleep(0.5)
            await platform.publish(commands, b"nonsense")
            (last,) = await _notices(sub, 1)
            assert last["id"] is None
            assert last["suppressed"] == suppressed
            assert sum(n["suppressed"] for n in [*notices, last]) == stats.command_errors_suppressed
            assert service.stats.command_errors == len(notices) + 1


async def test_a_notice_echoes_only_a_valid_id_and_a_known_type_and_no_sender_keys(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    # A reviewer's notice echoed a 16,000-character `id` and a 300-character `type` (16.5
    # KB), and a reason named the keys the sender chose (`side_bets.SECRET-...: ...`).
    commands = Topics(table_id).game_commands
    secret = "SECRET-CARD-NUMBER-4111111111111111"
    sent: list[tuple[bytes, str | None, str | None]] = [
        (json.dumps({"id": "A" * 16_000, "type": "X" * 300, "player": "p"}).encode(), None, None),
        (json.dumps({**BET, "id": "B" * 129, "colour": "red"}).encode(), None, "bet"),
        (json.dumps({**BET, "id": "", "colour": "red"}).encode(), None, "bet"),
        (json.dumps({**BET, "id": "C" * 128, "colour": "red"}).encode(), "C" * 128, "bet"),
        (json.dumps({"id": "c-raise", "type": "raise", "player": "p"}).encode(), "c-raise", None),
        (
            json.dumps({**BET, "id": "c-side", "side_bets": {secret: "x", "pp": "y"}}).encode(),
            "c-side",
            "bet",
        ),
        (json.dumps({**BET, "id": "c-unknown", secret: 1}).encode(), "c-unknown", "bet"),
    ]
    async with _controller(broker, tmp_path, table_id) as (service, platform, _):
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            for payload, *_ in sent:
                await platform.publish(commands, payload)
            notices = await _notices(sub, len(sent))
    for notice, (_, ident, kind) in zip(notices, sent, strict=True):
        shown = json.dumps(notice)[:300]  # a notice of the old code was 16 KB
        assert (notice["id"], notice["type"]) == (ident, kind), shown
        assert len(json.dumps(notice)) < 1_000, shown
        assert secret not in notice["reason"] and "4111" not in notice["reason"], shown
        assert "AAAA" not in notice["reason"] and "XXXX" not in notice["reason"]
    assert "type: must be one of bet" in notices[0]["reason"]
    assert "colour: Extra inputs are not permitted" in notices[1]["reason"]
    # The dict's field is named, not its keys; the same error of two keys is said once.
    assert notices[5]["reason"] == "side_bets.<key>: Input should be a valid decimal"
    assert notices[6]["reason"] == "<unknown field>: Extra inputs are not permitted"


async def test_a_boolean_that_is_not_true_or_false_is_answered_as_no_command(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    # `"take": "yes"` was coerced to true and taken as a command (then refused for the game
    # state, a round event), `"consent_auto": "on"` as consent to automatic debits.
    commands = Topics(table_id).game_commands
    insurance = {"type": "insurance", "player": "p1", "seat": 1}
    sent = [
        ({**insurance, "id": "c-take", "take": "yes"}, "insurance", "take"),
        ({**BET, "id": "c-consent", "consent_auto": "on"}, "bet", "consent_auto"),
        ({**BET, "id": "c-behind", "behind": 1}, "bet", "behind"),
        (
            {"type": "early_surrender", "player": "p1", "seat": 1, "id": "c-es", "take": "n"},
            "early_surrender",
            "take",
        ),
    ]
    async with _controller(broker, tmp_path, table_id) as (service, platform, log):
        await _open_betting(service, table_id)
        async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
            await _subscribed(service)
            for body, *_ in sent:
                await platform.publish(commands, json.dumps(body))
            notices = await _notices(sub, len(sent))
        for notice, (body, kind, field) in zip(notices, sent, strict=True):
            assert (notice["id"], notice["type"]) == (body["id"], kind)
            assert notice["reason"] == f"{field}: Input should be a valid boolean"
        assert await log.read(table_id=table_id, kinds=["game.command"]) == []
        assert await service.commands.answer(table_id, "c-take") is None


async def test_a_retained_malformed_command_is_not_answered_at_each_start(
    broker: BrokerSettings, tmp_path: Path, table_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A command is never meant to be retained: a malformed one left retained on the broker
    # was answered again at every start and reconnect of the controller.
    commands = Topics(table_id).game_commands
    async with MessageBus(broker, f"sender-{table_id}") as sender:
        await sender.wait_connected()
        await sender.publish(commands, b'{"id": "c-kept", "garbage": 1}', retain=True)
        await sender.flush()
    caplog.set_level(logging.WARNING, logger="studio.controller.service")
    for start in range(2):
        caplog.clear()
        async with _controller(broker, tmp_path, table_id) as (service, platform, _):
            async with platform.subscribe(_errors_topic(table_id), Raw) as sub:
                await _subscribed(service)
                assert service.bus is not None
                async with asyncio.timeout(5):
                    while service.bus.stats.malformed[commands] < 1:
                        await asyncio.sleep(0.02)
                # A live one is still answered (and after the retained one: it came first).
                await platform.publish(commands, b'{"id": "c-live", "garbage": 1}')
                (notice,) = await _notices(sub, 1)
                assert notice["id"] == "c-live", (start, notice)
                await asyncio.sleep(0.2)
                assert sub._queue.empty()
                assert service.stats.command_errors == 1
        retained = [r for r in caplog.records if "retained" in r.getMessage()]
        assert len(retained) == 1, [r.getMessage() for r in caplog.records]
        assert table_id in retained[0].getMessage()
    async with MessageBus(broker, f"clearer-{table_id}") as clearer:
        await clearer.wait_connected()
        await clearer.publish(commands, b"", retain=True)
