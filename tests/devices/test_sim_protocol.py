"""The simulated devices speak SDL/1 as docs/devices.md describes it, at the edges too:
a second command while the shuffler is busy, a shoe emptied by a fault, free text in a
frame. End to end through the real pty, drivers and broker where the drivers see it."""

from __future__ import annotations

import asyncio

import httpx
from devices_rig import Rig

from hwsim.control import create_app
from studio.contract.messages import DeviceCommand


async def test_a_shuffle_command_while_the_shuffler_is_busy_is_refused_with_e05(
    rig: Rig,
) -> None:
    shuffler = rig.table.shuffler
    shuffler.shuffle_time = 1.0  # a real shuffler takes its time
    shuffler.put(list(rig.table.shoe.cards[:104]))
    commands = rig.topics.commands("shuffler-1")
    await rig.consumer.publish(commands, DeviceCommand(command="shuffle", requester="test"))
    async with asyncio.timeout(5):
        while not any(f.type == "SHUFFLE" for f in shuffler.host_frames):
            await asyncio.sleep(0.01)
    await rig.consumer.publish(commands, DeviceCommand(command="shuffle", requester="test"))
    busy = await rig.rec.wait(
        lambda: [h for h in rig.rec.health("shuffler-1") if "E05" in h.reason]
    )
    assert busy[0].status == "degraded" and "busy" in busy[0].reason
    topic = rig.topics.shuffler_events
    complete = await rig.rec.wait(lambda: rig.rec.events(topic, "shuffle_complete"))
    assert complete[0].data["count"] == 104
    await asyncio.sleep(0.3)  # what a second shuffle of the empty tray would have sent
    # One shuffle, no count mismatch for a tray the first shuffle had emptied.
    assert [e.event for e in rig.rec.events(topic)] == [
        "shuffle_started",
        "shuffle_complete",
        "ready",
    ]


async def test_the_shoe_reports_empty_however_its_last_card_left(rig: Rig) -> None:
    table = rig.table
    topic = rig.topics.shoe_events
    for fault in ("double_pull", "misread"):
        before = len(rig.rec.events(topic, "shoe_empty"))
        table.shoe.position = len(table.shoe.cards) - (2 if fault == "double_pull" else 1)
        table.deal(fault=fault)
        assert table.shoe.remaining == 0
        await rig.rec.wait(lambda: len(rig.rec.events(topic, "shoe_empty")) > before)  # noqa: B023
        table.new_shoe()


async def test_free_text_sdl1_cannot_carry_is_refused_not_put_on_the_wire(rig: Rig) -> None:
    transport = httpx.ASGITransport(app=create_app(rig.sim))
    faults = f"/tables/{rig.table.id}/devices/cutcard/faults"
    async with httpx.AsyncClient(transport=transport, base_url="http://hwsim") as client:
        for detail in ("lens, dirty", "50*", "lens \u00e9", "x" * 250):
            body = {"fault": "sensor_fault", "params": {"detail": detail}}
            refused = await client.post(faults, json=body)
            assert refused.status_code == 400, (detail, refused.text)
            assert "SDL/1" in refused.json()["detail"]
        assert rig.table.cutcard.seq == 0 and not rig.table.cutcard.faulty
        body = {"fault": "sensor_fault", "params": {"detail": "lens dirty"}}
        assert (await client.post(faults, json=body)).status_code == 200
    topic = rig.topics.cutcard_events
    events = await rig.rec.wait(lambda: rig.rec.events(topic))
    assert [(e.event, e.seq, e.data) for e in events] == [
        ("sensor_fault", 1, {"detail": "lens dirty"})
    ]
    assert rig.drivers.get(rig.table.id, "cutcard-1").stats["frames_lost"] == 0


async def test_a_power_cycle_forgets_a_frame_held_back_by_reorder_next(rig: Rig) -> None:
    table = rig.table
    await table.fault("shoe", "reorder_next")
    held = [c.code for c in table.deal()]  # held back for the next event; a heartbeat reveals it
    await rig.rec.wait(lambda: [c.card for c in rig.rec.cards] == held)
    await table.fault("shoe", "power_cycle")
    await rig.rec.wait(
        lambda: [h for h in rig.rec.health("shoe-1") if "restarted its numbering" in h.reason]
    )
    after = [c.code for _ in range(3) for c in table.deal()]
    await rig.rec.wait(lambda: len(rig.rec.cards) >= 4)
    await asyncio.sleep(0.5)  # a stale frame would come with the first card after the cycle
    # Before, the held frame went out after the new numbering's seq 1 as its seq 2: the
    # card dealt before the power cycle was published again and the new seq 2 dropped.
    assert [c.card for c in rig.rec.cards] == held + after
