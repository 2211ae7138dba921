"""Card shoe end to end: simulator on a real pty -> shoe driver (pyserial) -> real broker."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from devices_rig import Rig, start_recorder

from drivers.runner import DriverSet
from hwsim.table import Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import Topics


async def test_each_card_dealt_is_published_with_device_seq(rig: Rig) -> None:
    dealt = [rig.table.deal()[0] for _ in range(20)]
    cards = await rig.rec.wait(lambda: len(rig.rec.cards) >= 20 and rig.rec.cards)
    assert [c.card for c in cards] == [card.code for card in dealt]
    device_seqs = [e.seq for e in rig.table.shoe.emitted if e.type == "CARD"]
    assert [c.seq for c in cards] == device_seqs
    assert all(c.shoe == rig.table.shoe.shoe_id and c.device == "shoe-1" for c in cards)
    assert all(b.seq == a.seq + 1 for a, b in itertools.pairwise(cards))


async def test_garbage_on_the_line_is_reported_and_the_driver_keeps_going(rig: Rig) -> None:
    first = rig.table.deal()[0]
    rig.table.shoe.inject_garbage(b"\x00\xff#NOISE,,12*ZZ\r\n\x1b[2J")
    rig.table.shoe.inject_garbage(b"$shoe-1,9,9,CARD,QH,S*0000\r\n")  # a frame with a bad CRC
    second = rig.table.deal()[0]
    cards = await rig.rec.wait(lambda: len(rig.rec.cards) >= 2 and rig.rec.cards)
    assert [c.card for c in cards] == [first.code, second.code]
    health = await rig.rec.wait(
        lambda: [
            h
            for h in rig.rec.health("shoe-1")
            if h.counters.get("frame_garbage") and h.counters.get("frame_checksum")
        ]
    )
    assert health[-1].status == "degraded"
    stats = rig.drivers.get(rig.table.id, "shoe-1").stats
    assert stats["frame_garbage"] >= 1 and stats["frame_checksum"] == 1


async def test_shoe_loaded_reports_the_new_shoe_id(rig: Rig) -> None:
    shoe_id = rig.table.new_shoe()
    loaded = await rig.rec.wait(lambda: rig.rec.events(rig.topics.shoe_events, "shoe_loaded"))
    assert loaded[0].data == {"shoe": shoe_id, "decks": 8}
    card = rig.table.deal()[0]
    got = await rig.rec.wait(lambda: rig.rec.cards)
    assert got[0].card == card.code and got[0].shoe == shoe_id


async def test_misread_double_pull_and_wrong_order(rig: Rig) -> None:
    shoe = rig.table.shoe
    upcoming = shoe.cards[shoe.position : shoe.position + 6]
    rig.table.deal(fault="misread")  # upcoming[0] leaves the shoe unread
    pulled = rig.table.deal(fault="double_pull")  # upcoming[1] and [2] together
    swapped = rig.table.deal(fault="wrong_order")  # upcoming[4] comes out before [3]
    after = rig.table.deal()
    assert pulled == upcoming[1:3] and swapped == [upcoming[4]] and after == [upcoming[3]]
    events = rig.rec.events
    await rig.rec.wait(lambda: len(rig.rec.cards) >= 4)
    names = [e.event for e in events(rig.topics.shoe_events)]
    assert names == ["misread", "double_pull"]
    assert [c.card for c in rig.rec.cards] == [
        c.code for c in (*upcoming[1:3], upcoming[4], upcoming[3])
    ]
    misread, double = events(rig.topics.shoe_events)
    first_card = rig.rec.cards[0]
    assert misread.seq < double.seq < first_card.seq


async def test_jam_tamper_and_shoe_empty(rig: Rig) -> None:
    table = rig.table
    await table.fault("shoe", "jam")
    await table.fault("shoe", "jam_clear")
    await table.fault("shoe", "tamper")
    await table.fault("shoe", "tamper_clear")
    table.shoe.position = len(table.shoe.cards) - 1  # the last card
    last = table.deal()[0]
    assert table.deal() == []
    names = await rig.rec.wait(
        lambda: (
            len(rig.rec.events(rig.topics.shoe_events)) >= 6
            and [e.event for e in rig.rec.events(rig.topics.shoe_events)]
        )
    )
    assert names == ["jam", "jam_cleared", "tamper", "tamper_cleared", "shoe_empty", "shoe_empty"]
    assert rig.rec.events(rig.topics.shoe_events, "tamper")[0].data == {"lid": "open"}
    assert rig.rec.cards[-1].card == last.code


async def test_barcoded_deck_cards_carry_their_serial(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    async with Simulator(
        [table_id], seed=2, base_dir=tmp_path, heartbeat_interval=0.1, barcoded=True
    ) as sim:
        table = sim.table(table_id)
        async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
            rec = await start_recorder(bus, topics, group)
            async with DriverSet(
                sim.studio_config(broker.url, heartbeat_timeout=2.0), broker=broker
            ) as drivers:
                await drivers.wait_online(20)
                dealt = [c.code for _ in range(3) for c in table.deal()]
                cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
            rec.stop()
    assert [c.card for c in cards] == dealt
    assert [c.serial for c in cards] == [f"{table.shoe.shoe_id}-{i:04d}" for i in range(3)]
