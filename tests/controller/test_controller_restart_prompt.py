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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from test_controller_lost_events import Device, load_shoe, shoe_table, until

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DealerPrompt, ShoeCard, Topics
from studio.controller import ControllerService
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.streams import Fanout


async def _round_dealing(
    service: ControllerService,
    bus: MessageBus,
    shoe: Device,
    table_id: str,
    codes: tuple[str, ...] = ("6H", "TH", "KS"),
    seats: tuple[int, ...] = (1, 2),
) -> None:
    """A shoe shuffled and loaded, ``seats`` bet, ``codes`` dealt (in the deal's order)."""
    topics = Topics(table_id)
    await load_shoe(service, bus, shoe, table_id)
    for seat in seats:
        bet = {"id": f"b{seat}", "type": "bet", "seat": seat, "player": f"p{seat}"}
        taken = await service.submit_command(table_id, {**bet, "stake": "10.00"})
        assert taken["accepted"]
    await until(lambda: service.tables[table_id].phase == "dealing")
    for seq, code in enumerate(codes, 101):
        await shoe.send(topics.shoe_cards, _card(seq, code))
    await until(lambda: len(service.tables[table_id].cards) == len(codes))


def _card(seq: int, code: str) -> ShoeCard:
    return ShoeCard(device="shoe-1", seq=seq, ts=datetime.now(UTC), card=code, shoe="S1")


async def test_a_card_dealt_while_the_controller_was_down_is_in_before_the_next_deal_prompt(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    config = shoe_table(broker, table_id)
    topics = Topics(table_id)
    prompts: list[dict[str, Any]] = []

    async def watch(bus: MessageBus) -> None:
        async with bus.subscribe(topics.dealer_prompt, DealerPrompt) as subscription:
            async for received in subscription:
                prompts.append(received.payload.model_dump(mode="json"))

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
            await _round_dealing(service, bus, shoe, table_id)
            table = service.tables[table_id]
            await until(lambda: len(table.cards) == 3)
            await until(lambda: bool(prompts) and (prompts[-1]["target"] or {}).get("n") == 4)
            assert prompts[-1]["action"] == "deal" and prompts[-1]["target"]["seat"] == 1
        # The controller is gone: the dealer draws for seat 1 as prompted, and no one hears it.
        await shoe.send(topics.shoe_cards, _card(104, "4D"), lost=True)
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
            await shoe.send(topics.shoe_cards, _card(105, "AC"))
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


class _CheckRefusedOnce(EventLog):
    """A log whose first ``controller.devices_checked`` write fails (the database away for
    a moment)."""

    refused = False

    async def append_batch(self, entries: Any, *args: Any, **kwargs: Any) -> Any:
        if entries and entries[0].kind == "controller.devices_checked" and not self.refused:
            self.refused = True
            raise StoreError("the database is away for a moment")
        return await super().append_batch(entries, *args, **kwargs)


async def test_a_device_check_the_log_refused_is_logged_at_the_next_pass(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    """A re-review: the start's one ``controller.devices_checked``, refused, was never sent
    again: the table prompted its dealer to wait, and held the players' timers, until the
    next start."""
    config = shoe_table(broker, table_id)
    async with (
        Database(f"sqlite:///{tmp_path}/studio.db") as db,
        MessageBus(broker, f"dev-{table_id}") as bus,
        asyncio.TaskGroup() as group,
    ):
        shoe = Device(bus, table_id, "shoe-1")
        replays = group.create_task(shoe.serve_replays())
        async with (
            MessageBus(broker, f"ctl-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, EventLog(db), Fanout(ctl_bus)) as service,
        ):
            # Seat 1's decision due (the reviewer's round: its hand 6H KS, the dealer's TH).
            deal = ("6H", "TH", "KS", "5D")
            await _round_dealing(service, bus, shoe, table_id, deal, seats=(1,))
        log = _CheckRefusedOnce(db)
        async with (
            MessageBus(broker, f"ctl2-{table_id}") as ctl_bus,
            ControllerService(config, ctl_bus, log, Fanout(ctl_bus)) as service,
        ):
            started = service.tables[table_id]
            await until(lambda: log.refused)
            await until(lambda: service.tables[table_id] is not started)  # rebuilt: checking
            await until(lambda: not service.tables[table_id].checking_devices)
            table = service.tables[table_id]
            assert table.prompt().action == "wait_decisions"
            assert table.decision_deadline is not None  # the player's timer runs again
        replays.cancel()
