"""A device event's ``data`` is the device's: the controller reads what it needs of it
strictly and passes the rest on under a type of its own (table logic 14).

A fuzzing review found that a shuffler's ``{"count": "abc"}`` raised in the table (a
traceback, the table rebuilt from its whole log, and the event's seq then counted as
lost: an integrity alert saying an event that did arrive "never arrived"); that 416.9 or
"416" verified as a count of 416; and that a device event the controller has no rule for
went out on ``round/events`` as ``shoe_<event>`` with the device's data as its fields, so
a shoe's ``loaded`` event read as the controller's own ``shoe_loaded``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from bus_support import controller_on_bus
from test_controller_table import Driver

from studio.config import BrokerSettings
from studio.contract.topics import Topics
from studio.store import Database


def _shuffled(d: Driver, data: dict[str, Any]) -> None:
    d.feed(
        "shuffler.event",
        {
            "device": "shuf",
            "seq": d.device("shuf"),
            "ts": d.ts(),
            "event": "shuffle_complete",
            "data": data,
        },
    )


FULL = {r: 32 for r in "A23456789TJQK"}


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"count": "abc", "census": FULL}, "count 'abc' is not a whole number"),
        ({"count": 416.9, "census": FULL}, "count '416.9' is not a whole number"),
        ({"count": "416", "census": FULL}, "count '416' is not a whole number"),
        ({"count": None, "census": FULL}, "count 'None' is not a whole number"),
        ({"count": True, "census": FULL}, "count 'True' is not a whole number"),
        ({"count": 416, "census": [1, 2]}, "census '[1, 2]' is not ranks and counts"),
        ({"count": 416, "census": {**FULL, "A": "x"}}, "is not ranks and counts"),
        ({"count": 416, "census": {**FULL, "A": 32.0}}, "is not ranks and counts"),
    ],
)
def test_a_shuffler_count_that_cannot_be_read_does_not_verify(
    data: dict[str, Any], why: str
) -> None:
    d = Driver()
    _shuffled(d, data)
    assert not d.table.shuffle_verified
    assert "shuffle_rejected" in d.types()
    (alert,) = d.alerts
    assert alert["code"] == "shuffler_count_mismatch"
    assert why in alert["message"]
    _shuffled(d, {"count": 416, "census": FULL})  # the next shuffle verifies as before
    assert d.table.shuffle_verified


def test_a_logic_13_log_reads_the_count_as_it_did() -> None:
    d = Driver()
    d.table.logic = 13
    _shuffled(d, {"count": "416", "census": {k: str(v) for k, v in FULL.items()}})
    assert d.table.shuffle_verified


def test_a_device_event_without_a_rule_goes_out_as_a_device_event() -> None:
    d = Driver()
    d.shuffle()
    d.load("S1")
    before = len(d.events)
    d.device_event("shoe.event", "shoe", "loaded", {"shoe": "FAKE", "verified": True})
    d.device_event("shuffler.event", "shuf", "ready", {"type_": 1, "seq": 99})
    d.device_event("cutcard.event", "cut", "cut_card_cleared", {})
    passed = [(e["type"], e["data"]) for e in d.events[before:]]
    assert passed == [
        (
            "device_event",
            {
                "source": "shoe",
                "device": "shoe",
                "event": "loaded",
                "data": {"shoe": "FAKE", "verified": True},
            },
        ),
        (
            "device_event",
            {
                "source": "shuffler",
                "device": "shuf",
                "event": "ready",
                "data": {"type_": 1, "seq": 99},
            },
        ),
        (
            "device_event",
            {"source": "cutcard", "device": "cut", "event": "cut_card_cleared", "data": {}},
        ),
    ]
    assert d.table.shoe.shoe_id == "S1"


def test_a_logic_13_log_passes_device_events_on_as_it_did() -> None:
    d = Driver()
    d.table.logic = 13
    d.device_event("cutcard.event", "cut", "cut_card_cleared", {"at": 3})
    assert (d.events[-1]["type"], d.events[-1]["data"]) == ("cutcard_cut_card_cleared", {"at": 3})


async def test_a_time_outside_the_calendar_in_utc_is_malformed_not_fatal(
    broker: BrokerSettings, database: Database, table_id: str
) -> None:
    # 9999-12-31T23:59:59-05:00 is a valid time with a zone, but not in UTC: converting it
    # raised OverflowError, which pydantic does not make a validation error, and it ended
    # the controller (every table) from one device message.
    topics = Topics(table_id)
    late = {"device": "cam-1", "seq": 1, "ts": "9999-12-31T23:59:59-05:00"}
    early = {"device": "shoe-1", "seq": 1, "ts": "0001-01-01T00:00:00+05:00"}
    async with controller_on_bus(broker, database, table_id) as (service, device):
        bus = service.bus
        assert bus is not None

        async def sent(cid: str) -> None:  # and seen: the subscriptions are in place
            command = {"id": cid, "type": "bet", "seat": 1, "player": "p1", "stake": "10"}
            async with asyncio.timeout(20):
                while await service.commands.answer(table_id, cid) is None:
                    await device.publish(topics.game_commands, json.dumps(command))
                    await asyncio.sleep(0.2)

        await sent("before")
        card = {**late, "card": "QH", "zone": "seat:3", "confidence": 0.9}
        await device.publish(topics.camera_cards, json.dumps(card))
        health = {**early, "status": "degraded", "reason": "x", "counters": {}}
        await device.publish(topics.health("shoe-1"), json.dumps(health))
        await sent("after")
        dropped = (topics.camera_cards, topics.health("shoe-1"))
        async with asyncio.timeout(20):  # counted in their own consumers' time
            while any(bus.stats.malformed[topic] != 1 for topic in dropped):
                await asyncio.sleep(0.02)
        assert all(not task.done() for task in service._tasks)
