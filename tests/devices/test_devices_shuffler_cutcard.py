"""Counting shuffler and cut-card sensor end to end, including shuffler commands over MQTT."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from devices_rig import Rig

from studio.cards import RANKS
from studio.contract.messages import DeviceCommand


async def test_new_shoe_reports_shuffle_count_census_and_ready(rig: Rig) -> None:
    shoe_id = rig.table.new_shoe()
    topic = rig.topics.shuffler_events
    events = await rig.rec.wait(lambda: len(rig.rec.events(topic)) >= 4 and rig.rec.events(topic))
    assert [e.event for e in events] == ["shuffle_started", "shuffle_complete", "ready", "ejected"]
    complete = events[1]
    assert complete.data["count"] == 416
    assert complete.data["census"] == {rank: 32 for rank in RANKS}
    assert events[3].data == {"count": 416}
    # The shoe is loaded with exactly the ejected cards.
    assert Counter(c.rank for c in rig.table.shoe.cards) == Counter({r: 32 for r in RANKS})
    await rig.rec.wait(lambda: rig.rec.events(rig.topics.shoe_events, "shoe_loaded"))
    assert rig.rec.events(rig.topics.shoe_events, "shoe_loaded")[0].data["shoe"] == shoe_id


async def test_count_mismatch_missing_extra_and_foreign(rig: Rig) -> None:
    topic = rig.topics.shuffler_events
    shuffler = rig.table.shuffler
    for fault in ("missing_card", "extra_card", "foreign_card"):
        await rig.table.fault("shuffler", fault)
        shuffler.put([*rig.table.shoe.cards[:52]], expected=52)
        assert shuffler.shuffle() is False
        shuffler.loaded = []
    mismatches = await rig.rec.wait(
        lambda: (
            len(rig.rec.events(topic, "count_mismatch")) >= 3
            and rig.rec.events(topic, "count_mismatch")
        )
    )
    assert [(m.data["kind"], m.data["expected"], m.data["counted"]) for m in mismatches] == [
        ("missing", 52, 51),
        ("extra", 52, 53),
        ("foreign", 52, 53),
    ]
    assert "foreign" in mismatches[2].data["detail"]


async def test_jam_and_door_open(rig: Rig) -> None:
    for fault in ("jam", "jam_clear", "door_open", "door_close"):
        await rig.table.fault("shuffler", fault)
    topic = rig.topics.shuffler_events
    events = await rig.rec.wait(lambda: len(rig.rec.events(topic)) >= 4 and rig.rec.events(topic))
    assert [e.event for e in events] == ["jam", "jam_cleared", "door_open", "door_closed"]


async def test_shuffle_and_eject_commands_over_mqtt(rig: Rig) -> None:
    shuffler = rig.table.shuffler
    shuffler.put(list(rig.table.shoe.cards[:104]))
    commands = rig.topics.commands("shuffler-1")
    await rig.consumer.publish(commands, DeviceCommand(command="shuffle", requester="test"))
    topic = rig.topics.shuffler_events
    await rig.rec.wait(lambda: rig.rec.events(topic, "ready"))
    complete = rig.rec.events(topic, "shuffle_complete")[0]
    assert complete.data["count"] == 104
    await rig.consumer.publish(commands, DeviceCommand(command="eject"))
    ejected = await rig.rec.wait(lambda: rig.rec.events(topic, "ejected"))
    assert ejected[0].data == {"count": 104}
    # The ejected cards became a new shoe.
    loaded = await rig.rec.wait(lambda: rig.rec.events(rig.topics.shoe_events, "shoe_loaded"))
    assert loaded[0].data["decks"] == 2


async def test_refused_command_is_a_health_event(rig: Rig) -> None:
    await rig.table.fault("shuffler", "door_open")
    rig.table.shuffler.put(list(rig.table.shoe.cards[:52]))

    def answered() -> list[Any]:
        return [
            h
            for h in rig.rec.health("shuffler-1")
            if "door open" in h.reason or "not sent" in h.reason
        ]

    # A machine loaded enough to starve the drivers' loop past the heartbeat timeout takes
    # the link down a moment ("command 'shuffle' not sent: ... is not connected", seen on a
    # shared two-core machine): the command is sent again once the link is back.
    for _ in range(3):
        await rig.drivers.wait_online(20)
        sent = len(answered())
        await rig.consumer.publish(
            rig.topics.commands("shuffler-1"), DeviceCommand(command="shuffle")
        )
        await rig.rec.wait(lambda sent=sent: answered()[sent:])
        if any("door open" in h.reason for h in answered()):
            break
    health = [h for h in rig.rec.health("shuffler-1") if "door open" in h.reason]
    assert health[0].status == "degraded" and "E06" in health[0].reason
    assert not rig.rec.events(rig.topics.shuffler_events, "shuffle_started")


async def test_cut_card_detected_cleared_and_sensor_fault(rig: Rig) -> None:
    table = rig.table
    table.shoe.position = table.cut_index - 1 if table.cut_index else 0
    table.deal()  # the card at the cut position: the cut card comes out
    await table.fault("cutcard", "sensor_fault", detail="lens dirty")
    await table.fault("cutcard", "sensor_ok")
    table.new_shoe()  # a new shoe clears the cut card
    topic = rig.topics.cutcard_events
    events = await rig.rec.wait(lambda: len(rig.rec.events(topic)) >= 4 and rig.rec.events(topic))
    assert [e.event for e in events] == [
        "cut_card_detected",
        "sensor_fault",
        "sensor_ok",
        "cut_card_cleared",
    ]
    assert events[1].data == {"detail": "lens dirty"}
    table.trigger_cut()
    await rig.rec.wait(lambda: len(rig.rec.events(topic)) >= 5)
    assert rig.rec.events(topic)[-1].event == "cut_card_detected"


async def test_a_command_delivered_twice_is_sent_to_the_device_once(rig: Rig) -> None:
    # QoS 1 may deliver a command twice (a broker reconnect before the PUBACK): the same
    # command id is the same request, and a device that does not guard its state would
    # act twice (eject a second time, shuffle a tray again).
    shuffler = rig.table.shuffler
    shuffler.put(list(rig.table.shoe.cards[:52]))
    commands = rig.topics.commands("shuffler-1")
    request = DeviceCommand(command="shuffle", id="cmd-7", requester="test")
    await rig.consumer.publish(commands, request)
    await rig.consumer.publish(commands, request)
    topic = rig.topics.shuffler_events
    await rig.rec.wait(lambda: rig.rec.events(topic, "ready"))
    driver = rig.drivers.get(rig.table.id, "shuffler-1")
    async with asyncio.timeout(20):
        while driver.stats["duplicate_commands"] + driver.stats["commands"] < 2:
            await asyncio.sleep(0.01)
    assert driver.stats["duplicate_commands"] == 1
    assert [f.type for f in shuffler.host_frames].count("SHUFFLE") == 1
    assert not [h for h in rig.rec.health("shuffler-1") if "E05" in h.reason]
    # Another id is another request.
    shuffler.put(list(rig.table.shoe.cards[52:104]))
    await rig.consumer.publish(commands, DeviceCommand(command="shuffle", id="cmd-8"))
    await rig.rec.wait(lambda: len(rig.rec.events(topic, "ready")) >= 2)
    assert [f.type for f in shuffler.host_frames].count("SHUFFLE") == 2
