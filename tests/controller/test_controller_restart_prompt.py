"""After a restart the dealer is not prompted again for a card drawn while the controller was down.

The card the dealer drew while the controller was down (or that was in flight at its death)
is in the shoe driver's replay buffer only: the new run asks each device for its tail, and
until that had time to come back the table it rebuilt from the log lacks the card. Before,
the start published the log's prompt at once ("deal to seat 1", the card already laid
there) and asked for the tails a second later: a dealer who drew on it laid the card at
seat 1, and the studio, the tail's card in first, booked it to seat 2 (a review, kill -9
against real Mosquitto: a blackjack paid on cards seat 2 did not hold). Now the prompt
says to wait until the tails had time to come, and the next deal prompt is the right box.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig, TableSettings
from studio.contract import DealerPrompt, DeviceEvent, ReplayRequest, ShoeCard, Topics
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Fanout


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


class Device:
    """A shoe's driver on the real broker: publishes its events and answers replay requests
    from its buffer (``lost``: in the buffer, never sent: no one was listening)."""

    def __init__(self, bus: MessageBus, table_id: str, device: str) -> None:
        self.bus, self.topics, self.device = bus, Topics(table_id), device
        self.buffer: dict[int, tuple[str, ShoeCard | DeviceEvent]] = {}

    async def send(self, topic: str, event: ShoeCard | DeviceEvent, *, lost: bool = False) -> None:
        self.buffer[event.seq] = (topic, event)
        if not lost:
            await self.bus.publish(topic, event)

    async def serve_replays(self) -> None:
        async with self.bus.subscribe(self.topics.replay(self.device), ReplayRequest) as sub:
            async for received in sub:
                for seq in sorted(self.buffer):
                    if seq >= received.payload.from_seq:
                        await self.bus.publish(*self.buffer[seq])


def _config(broker: BrokerSettings, table_id: str) -> StudioConfig:
    ruleset = {"preset": "clubhouse", "timeouts": {"betting_seconds": 1}}
    devices = [{"id": "shoe-1", "kind": "shoe"}, {"id": "shuf", "kind": "shuffler"}]
    return StudioConfig(
        broker=broker,
        tables=[TableSettings(id=table_id, single_source=True, ruleset=ruleset, devices=devices)],
    )


async def test_a_card_dealt_while_the_controller_was_down_is_in_before_the_next_deal_prompt(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    config = _config(broker, table_id)
    topics = Topics(table_id)
    prompts: list[dict[str, Any]] = []

    async def watch(bus: MessageBus) -> None:
        async with bus.subscribe(topics.dealer_prompt, DealerPrompt) as subscription:
            async for received in subscription:
                prompts.append(received.payload.model_dump(mode="json"))

    def card(seq: int, code: str) -> ShoeCard:
        return ShoeCard(device="shoe-1", seq=seq, ts=datetime.now(UTC), card=code, shoe="S1")

    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as bus,
        asyncio.TaskGroup() as group,
    ):
        shoe = Device(bus, table_id, "shoe-1")
        replays = group.create_task(shoe.serve_replays())
        watcher = group.create_task(watch(bus))
        async with (
            MessageBus(broker, f"ctl-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, EventLog(db), Fanout(ctl_bus)) as service,
        ):
            await bus.wait_connected()
            await asyncio.wait_for(service.listening.wait(), 20)
            census = {rank: 32 for rank in "A23456789TJQK"}
            now = datetime.now(UTC)
            count = {"count": 416, "census": census}
            shuffled = DeviceEvent(
                device="shuf", seq=1, ts=now, event="shuffle_complete", data=count
            )
            await bus.publish(topics.shuffler_events, shuffled)
            loaded = DeviceEvent(
                device="shoe-1", seq=100, ts=now, event="shoe_loaded", data={"shoe": "S1"}
            )
            await shoe.send(topics.shoe_events, loaded)
            await until(lambda: service.tables[table_id].phase == "betting")
            for seat in (1, 2):
                bet = {"id": f"b{seat}", "type": "bet", "seat": seat, "player": f"p{seat}"}
                taken = await service.submit_command(table_id, {**bet, "stake": "10.00"})
                assert taken["accepted"]
            await until(lambda: service.tables[table_id].phase == "dealing")
            for seq, code in ((101, "6H"), (102, "TH"), (103, "KS")):
                await shoe.send(topics.shoe_cards, card(seq, code))
            table = service.tables[table_id]
            await until(lambda: len(table.cards) == 3)
            await until(lambda: bool(prompts) and (prompts[-1]["target"] or {}).get("n") == 4)
            assert prompts[-1]["action"] == "deal" and prompts[-1]["target"]["seat"] == 1
        # The controller is gone: the dealer draws for seat 1 as prompted, and no one hears it.
        await shoe.send(topics.shoe_cards, card(104, "4D"), lost=True)
        stale = prompts[-1]
        seen = len(prompts)
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, EventLog(db), Fanout(ctl_bus)) as service,
        ):
            table = service.tables[table_id]
            # The dealer draws on the first deal prompt the new run shows.
            await until(lambda: any(p["action"] == "deal" for p in prompts[seen:]))
            followed = next(p for p in prompts[seen:] if p["action"] == "deal")
            await shoe.send(topics.shoe_cards, card(105, "AC"))
            await until(lambda: len(table.cards) == 5)
            after = prompts[seen:]
            replays.cancel()
            watcher.cancel()
            boxes = table.engine.snapshot()["boxes"]
            hands = {box["seat"]: box["hands"][0]["cards"] for box in boxes}
            # The first prompt of the new run is not the log's stale one: a wait.
            assert after[0]["action"] == "wait" and "restarted" in after[0]["text"]
            assert stale["target"] not in [p["target"] for p in after]
            # The card drawn on the next deal prompt went where that prompt said.
            assert followed["target"]["seat"] == 2 and followed["target"]["n"] == 5
            assert hands == {1: ["6H", "4D"], 2: ["TH", "AC"]}
