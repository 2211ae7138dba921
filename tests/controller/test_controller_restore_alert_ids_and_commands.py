"""The two gaps a restore of an older backup left after the start's numbering check
(docs/operations.md, *Backups*; test_controller_numbering_after_restore.py's fixtures).

Alert ids ``{table}-A{n}`` are numbered from the log, and the alerts topic is not retained:
until 2026-12-06 a table resumed with ``--after-restore`` gave the alert ids raised after
the backup again, to other alerts (``t1-A1`` raised twice). Now ``round/state`` retains the
last alert id, and the start goes on after it.

A game command answered after the backup and sent again (the index of ids taken is the
backup's) was taken anew, into the round open then: a command named no round. Now a command
may name its round (``round_id``): one that is not the round open is refused
(``round_not_open``), never applied to another.

Real brokers (the embedded one and the machine's Mosquitto), a real SQLite file backed up and
restored as the docs say.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from test_controller_numbering_after_restore import (
    T0,
    _backup,
    _Clock,
    _new_shoe,
    _next_round,
    _platform,
    _restore,
    _running,
)
from test_controller_table import Driver

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import AlertMessage, RoundEvent, RoundState, Topics
from studio.controller import ControllerService
from studio.controller.commands import CommandIdTaken
from studio.controller.numbering import NUMBERING_RESUMED, LogBehindBroker
from studio.store import Database, EventLog


async def _stray_card(service: ControllerService, table_id: str, seq: int) -> str:
    """A card drawn while betting is open: an alert (``game_before_time``, then, the table
    paused, the held card's); its id."""
    alerts = service.tables[table_id].alerts
    before = len(alerts.all())
    at = {"device": "shoe", "seq": seq, "ts": T0.isoformat(), "serial": None}
    shoe = service.tables[table_id].shoe.shoe_id
    await service.submit(table_id, "shoe.card", {**at, "card": "5S", "shoe": shoe})
    (raised,) = alerts.all()[before:]
    return raised.alert_id


@asynccontextmanager
async def _alerts_seen(broker: BrokerSettings, table_id: str) -> AsyncIterator[list[str]]:
    """A platform's subscriber to the table's alerts: the ids of those raised."""
    raised: list[str] = []
    async with (
        MessageBus(broker, f"alerts-{table_id}") as platform,
        platform.subscribe(Topics(table_id).alerts, AlertMessage) as alerts,
    ):

        async def collect() -> None:
            async for message in alerts:
                if message.payload.state == "raised":
                    raised.append(message.payload.alert_id)

        collector = asyncio.create_task(collect(), name="test:collect-alerts")
        try:
            yield raised
        finally:
            collector.cancel()


async def _retained_state(broker: BrokerSettings, table_id: str) -> RoundState:
    topic = Topics(table_id).round_state
    async with (
        MessageBus(broker, f"state-{table_id}") as reader,
        reader.subscribe(topic, RoundState, accept=topic.__eq__) as states,
    ):
        async with asyncio.timeout(10):
            while not (got := await states.get()).retain:
                pass
    return got.payload


async def _until(seen: list[str], count: int) -> None:
    async with asyncio.timeout(20):
        while len(seen) < count:
            await asyncio.sleep(0.02)


@pytest.mark.timeout(60)
async def test_after_restore_alert_ids_go_on_after_the_broker_s(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    live, saved = tmp_path / "studio.db", tmp_path / "backup.db"
    clock = _Clock()
    async with _running(broker, live, table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")  # R1 betting, no alert yet
    await asyncio.to_thread(_backup, live, saved)
    async with _alerts_seen(broker, table_id) as before:
        async with _running(broker, live, table_id, clock) as service:
            # Raised after the backup, seen by the platform, then lost with the restore.
            first = [await _stray_card(service, table_id, seq) for seq in (2, 3)]
        await _until(before, 2)
    assert before == first == [f"{table_id}-A1", f"{table_id}-A2"]
    assert (await _retained_state(broker, table_id)).last_alert_id == f"{table_id}-A2"
    _restore(saved, live)

    with pytest.raises(LogBehindBroker) as refused:
        async with _running(broker, live, table_id, clock):
            pytest.fail("a log behind the broker's numbering was started")
    said = str(refused.value)
    assert f"names alert {table_id}-A2 as the last raised, the log's last is none" in said
    assert f"numbers alerts from {table_id}-A3" in said

    async with _alerts_seen(broker, table_id) as after:
        async with _running(broker, live, table_id, clock, after_restore=True) as service:
            assert service.tables[table_id].alerts.all() == []  # the log holds none
            await _new_shoe(service, table_id, 10, "S2")
            again = await _stray_card(service, table_id, 11)
        await _until(after, 1)
    # Until 2026-12-06: t-A1 again, an id the platform had for another alert.
    assert after == [again] == [f"{table_id}-A3"]
    async with Database(f"sqlite:///{live}") as db:
        (record,) = await EventLog(db).read(table_id=table_id, kinds=[NUMBERING_RESUMED])
    assert (record.payload["alert_no"], record.payload["log"]["alert_no"]) == (2, 0)
    # A later start, without the option, replays the resume the same and is not refused.
    async with _running(broker, live, table_id, clock) as service:
        assert service.tables[table_id].alerts.last_id == f"{table_id}-A3"
        assert await _stray_card(service, table_id, 12) == f"{table_id}-A4"


async def _answer(events: list[RoundEvent], command_id: str) -> RoundEvent:
    async with asyncio.timeout(20):
        while True:
            for event in events:
                if event.type.startswith("command_") and event.data.get("id") == command_id:
                    return event
            await asyncio.sleep(0.02)


@pytest.mark.timeout(60)
async def test_a_command_naming_its_round_sent_again_after_a_restore_is_refused(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    live, saved = tmp_path / "studio.db", tmp_path / "backup.db"
    clock = _Clock()
    bet = {"id": "bet-1", "type": "bet", "seat": 1, "player": "p1", "stake": "10"}
    async with _running(broker, live, table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")  # R1 betting
    await asyncio.to_thread(_backup, live, saved)
    async with _running(broker, live, table_id, clock) as service:
        # Answered after the backup: the restored index of ids taken does not hold it.
        taken = await service.submit_command(table_id, {**bet, "round_id": f"{table_id}-R1"})
        assert taken["accepted"] is True
        await _next_round(service, table_id, clock)  # R1 cancelled, R2 open
    _restore(saved, live)

    events: list[RoundEvent] = []
    async with (
        _platform(broker, table_id, events),
        _running(broker, live, table_id, clock, after_restore=True) as service,
        MessageBus(broker, f"platform-commands-{table_id}") as platform,
    ):
        await _new_shoe(service, table_id, 2, "S2")
        table = service.tables[table_id]
        assert (table.phase, table.round_id) == ("betting", f"{table_id}-R3")
        await asyncio.wait_for(service.listening.wait(), 20)
        # The platform's retry of the answer it lost, over MQTT, as it was sent.
        resent = json.dumps({**bet, "round_id": f"{table_id}-R1"}).encode()
        await platform.publish(Topics(table_id).game_commands, resent, qos=1)
        refused = await _answer(events, "bet-1")
        assert refused.type == "command_rejected" and refused.round_id == f"{table_id}-R3"
        assert refused.data["code"] == "round_not_open"
        reason = refused.data["reason"]
        assert f"for round {table_id}-R1, and round {table_id}-R3 is open" in reason, reason
        assert table.state().boxes == []  # nothing taken into R3
        # Named, the round open takes it; unnamed, as before the field (and logged as then).
        for body in (
            {**bet, "id": "bet-2", "round_id": f"{table_id}-R3"},
            {**bet, "id": "bet-3", "seat": 2, "player": "p2"},
        ):
            assert (await service.submit_command(table_id, body))["accepted"] is True
        accepted = await _answer(events, "bet-3")
        assert "round_id" not in accepted.data["command"]
        assert [box["seat"] for box in table.state().boxes] == [1, 2]
        # A round named once it is over: refused with the code, over REST too.
        await _next_round(service, table_id, clock)  # R3 cancelled, R4 open
        late = {**bet, "id": "bet-4", "round_id": f"{table_id}-R3"}
        answer = await service.submit_command(table_id, late)
        assert (answer["accepted"], answer["code"]) == (False, "round_not_open")
        assert f"round {table_id}-R4 is open" in answer["reason"]


def test_a_command_naming_a_round_that_is_over_or_not_yet_open_is_refused() -> None:
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1", cid="early", round_id="bj-1-R2")  # the next round, not open yet
    assert "for round bj-1-R2, and round bj-1-R1 is open" in d.rejected("early")
    d.bet(1, "p1", cid="on-time", round_id="bj-1-R1")
    d.tick(20)
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    d.card("KD")  # the dealer busts: R1 settled, still the table's round id
    assert (d.table.phase, d.table.round_id) == ("settled", "bj-1-R1")
    d.feed(
        "game.command",
        {"id": "late", "type": "insurance", "player": "p1", "take": True, "round_id": "bj-1-R1"},
    )
    assert d.rejected("late") == (
        "the command is for round bj-1-R1, and it is over (phase settled) on table bj-1: "
        "not applied to another round"
    )
    codes = {e["data"]["id"]: e["data"].get("code") for e in d.events if "id" in e["data"]}
    assert codes["early"] == codes["late"] == "round_not_open"
    assert codes["on-time"] is None  # accepted: no code


@pytest.mark.timeout(60)
async def test_a_command_sent_again_naming_its_round_or_no_more_is_the_same_command(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A platform that names rounds on its retries only, or since an upgrade, sends again a
    command taken without ``round_id``: naming the round it was taken in, it is the same
    command, answered with its first answer (until 2026-12-06 refused as another command
    under a taken id, "nothing was applied", while the bet stood: a review). Naming another
    round, the id is taken for another command. One taken naming its round, sent again
    without it, is the same command."""
    clock = _Clock()
    bet = {"id": "bet-1", "type": "bet", "seat": 1, "player": "p1", "stake": "10"}
    async with _running(broker, tmp_path / "studio.db", table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")  # R1 betting
        first = await service.submit_command(table_id, bet)
        assert first["accepted"] is True
        assert await service.submit_command(table_id, {**bet, "round_id": f"{table_id}-R1"}) == (
            first
        )
        with pytest.raises(CommandIdTaken, match="for another command"):
            await service.submit_command(table_id, {**bet, "round_id": f"{table_id}-R2"})
        named = {**bet, "id": "bet-2", "seat": 2, "player": "p2", "round_id": f"{table_id}-R1"}
        taken = await service.submit_command(table_id, named)
        assert taken["accepted"] is True
        unnamed = {k: v for k, v in named.items() if k != "round_id"}
        assert await service.submit_command(table_id, unnamed) == taken
        boxes = service.tables[table_id].state().boxes
        assert [(box["seat"], box["stake"]) for box in boxes] == [(1, "10.00"), (2, "10.00")]
