"""A device event under a seq the log holds, that is another event than the one logged:
a device whose numbering went back (a reset whose driver lost its state) had every event
it sent under a logged seq dropped as a duplicate, the cards too, without a word; the
round waited on a card that had left the shoe (a crash-consistency review). Now the
first such event raises an ``integrity`` alert (once, until the device's numbering is
fresh again); a re-send of the same event is a duplicate as before."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from bus_support import controller_on_bus

from studio.config import BrokerSettings
from studio.contract.topics import Topics
from studio.controller import ControllerService
from studio.controller.conflicts import identity
from studio.store import Database

FULL = {r: 32 for r in "A23456789TJQK"}
TS = datetime(2026, 12, 5, 12, 0, tzinfo=UTC).isoformat()


def _event(device: str, seq: int, event: str, **data: Any) -> str:
    return json.dumps({"device": device, "seq": seq, "ts": TS, "event": event, "data": data})


def _card(seq: int, card: str) -> str:
    return json.dumps({"device": "shoe-1", "seq": seq, "ts": TS, "card": card, "shoe": "S1"})


async def _until(predicate: Any) -> None:
    async with asyncio.timeout(20):
        while not predicate():
            await asyncio.sleep(0.05)


def _conflicts(service: ControllerService, table_id: str) -> list[dict[str, Any]]:
    return [
        a
        for a in service.alerts(table=table_id)
        if a["code"] == "integrity" and "again as another event" in a["message"]
    ]


async def test_another_event_under_a_logged_seq_is_an_alert_once(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    topics = Topics(table_id)
    async with controller_on_bus(broker, database, table_id) as (service, device):
        shuffled = _event("shuffler-1", 1, "shuffle_complete", count=416, census=FULL)
        await device.publish(topics.shuffler_events, shuffled)
        await device.publish(topics.shoe_events, _event("shoe-1", 1, "shoe_loaded", shoe="S1"))
        await device.publish(topics.shoe_events, _event("shoe-1", 2, "lid_closed"))
        await device.publish(topics.shoe_events, _event("shoe-1", 3, "lid_opened"))
        await _until(lambda: service.received(table_id, "shoe-1") >= 3)
        # The same event again (a re-send): a duplicate, dropped, no alert.
        await device.publish(topics.shoe_events, _event("shoe-1", 2, "lid_closed"))
        await _until(lambda: service.stats.duplicates >= 1)
        # Another event under seq 2 and seq 3: one alert for both.
        await device.publish(topics.shoe_cards, _card(2, "QH"))
        await device.publish(topics.shoe_cards, _card(3, "7C"))
        await _until(lambda: service.stats.seq_conflicts >= 2)
        (alert,) = _conflicts(service, table_id)
        assert "shoe-1 sent seq 2 again as another event" in alert["message"]
        assert '"card":"QH"' in alert["message"] and "lid_closed" in alert["message"]
        assert alert["severity"] == "critical" and service.tables[table_id].paused
        # A fresh seq, then another conflict: alerted again.
        await device.publish(topics.shoe_events, _event("shoe-1", 4, "lid_closed"))
        await _until(lambda: service.received(table_id, "shoe-1") >= 4)
        await device.publish(topics.shoe_cards, _card(1, "AS"))
        await _until(lambda: len(_conflicts(service, table_id)) == 2)
    # A restart rebuilds what each seq was from the log.
    async with controller_on_bus(broker, database, table_id) as (service, device):
        await _until(lambda: service.received(table_id, "shoe-1") == 4)
        while not service.stats.duplicates:  # until its subscriptions are in place
            await device.publish(topics.shoe_events, _event("shoe-1", 4, "lid_closed"))
            await asyncio.sleep(0.2)
        await device.publish(topics.shoe_cards, _card(3, "KD"))
        await _until(lambda: len(_conflicts(service, table_id)) == 3)
        duplicates = service.stats.duplicates
        await device.publish(topics.shoe_events, _event("shoe-1", 3, "lid_opened"))
        await _until(lambda: service.stats.duplicates > duplicates)
        assert service.stats.seq_conflicts == 1


def test_a_card_sent_again_under_another_shoe_stamp_is_the_same_event() -> None:
    # ACME-STX cards name no shoe: their driver stamps the one loaded, and after a crash it
    # may re-send a card as shoe "unknown" (a review): not another event.
    logged = {"device": "shoe-1", "seq": 5, "ts": TS, "card": "QH", "shoe": "S1"}
    again = {**logged, "shoe": "unknown", "ts": "2026-12-05T12:00:09Z"}
    assert identity("shoe.card", logged) == identity("shoe.card", again)
    assert identity("shoe.card", logged) != identity("shoe.card", {**logged, "card": "QS"})
    loaded = {"device": "shoe-1", "seq": 1, "ts": TS, "event": "shoe_loaded"}
    assert identity("shoe.event", {**loaded, "data": {"shoe": "S1"}}) != identity(
        "shoe.event", {**loaded, "data": {"shoe": "S2"}}
    )
