"""The simulated dealer deals nothing once its table is paused.

It took its prompts one at a time, waiting its pace after each: a "deal" the controller
sent just before "Paused: call manager" was dealt after the pause (a demo review: after a
double pull the dealer drew three more cards, 160 ms and more after the pause, each a
"drawn while the round is paused" alert, and the camera's sighting of one became "card KS
on seat:1 was not scanned by the shoe" although the shoe had read it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiomqtt

from hwsim.table import SimTable
from studio.bus import MessageBus, Subscription
from studio.config import BrokerSettings
from studio.contract import DealerPrompt, Topics
from studio.demo.dealer import DealerBot


def _message(topic: str, action: str, n: int, target: dict[str, Any] | None) -> aiomqtt.Message:
    prompt = DealerPrompt(
        table="t-dealer-paused",
        round_id="r1",
        ts=datetime.now(UTC),
        action=action,
        text=action,
        target=target,
    )
    return aiomqtt.Message(topic, prompt.model_dump_json().encode(), 1, True, n, None)


@contextlib.asynccontextmanager
async def _running(
    sim: SimTable, client_id: str, pace: float
) -> AsyncIterator[tuple[DealerBot, Subscription[Any], str]]:
    """A dealer of ``sim`` running, its prompts' subscription (served by hand: the bus is
    never connected) and their topic."""
    bus = MessageBus(BrokerSettings(url="mqtt://127.0.0.1:9"), client_id)
    dealer = DealerBot(bus, sim, pace=pace)
    task = asyncio.create_task(dealer.run(), name="dealer")
    try:
        async with asyncio.timeout(5):
            while not bus._subs:
                await asyncio.sleep(0.001)
        yield dealer, bus._subs[0], Topics(sim.id).dealer_prompt
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_deal_prompt_overtaken_by_a_pause_is_not_dealt(tmp_path: Path) -> None:
    sim = SimTable("t-dealer-paused", base_dir=tmp_path)
    sim.new_shoe()
    async with _running(sim, "dealer-paused", 0.3) as (dealer, sub, topic):
        sub.offer(_message(topic, "deal", 1, {"kind": "box", "seat": 1}))
        async with asyncio.timeout(5):
            while dealer.cards_dealt < 1:
                await asyncio.sleep(0.01)
        # While the dealer waits its pace: the next card asked for, then the pause.
        sub.offer(_message(topic, "deal", 2, {"kind": "box", "seat": 2}))
        sub.offer(_message(topic, "paused", 3, None))
        await asyncio.sleep(1.0)
        assert dealer.cards_dealt == 1
        # Resumed: the dealer deals what the prompt now asks.
        sub.offer(_message(topic, "deal", 4, {"kind": "box", "seat": 2}))
        async with asyncio.timeout(5):
            while dealer.cards_dealt < 2:
                await asyncio.sleep(0.01)


async def test_a_shoe_refused_while_the_shuffler_is_jammed_is_made_once_it_can_run(
    tmp_path: Path,
) -> None:
    """A "shuffle" prompt refused (the shuffler jammed) is tried again once the jam is
    cleared: the prompt does not change when a jam clears, and the table waited on it for
    good (a review of the simulator: a manager who resolved the jam's alert first)."""
    sim = SimTable("t-dealer-jammed", base_dir=tmp_path)
    await sim.fault("shuffler", "jam")
    async with _running(sim, "dealer-jammed", 0.05) as (dealer, sub, topic):
        sub.offer(_message(topic, "shuffle", 1, None))
        await asyncio.sleep(0.5)
        assert dealer.shoes == 0  # refused: jammed
        await sim.fault("shuffler", "jam_clear")
        async with asyncio.timeout(5):
            while dealer.shoes < 1:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        assert dealer.shoes == 1  # once


async def test_a_card_drawn_by_someone_else_sends_the_dealer_back_to_the_prompt(
    tmp_path: Path,
) -> None:
    """The demo's ``misread`` fault draws a card itself, whenever its timer says, while the
    dealer waits its pace on the prompt to deal the next: the pause that card brings reaches
    the dealer a few milliseconds after it (the driver, the controller's log, the broker).
    The dealer dealt on the prompt it held, and a second alert, "7H drawn while the round is
    paused", came 3 ms after the misread's (a review at --pace 0.2). A card left the shoe
    that the dealer did not deal: it looks at the prompt again before dealing."""
    sim = SimTable("t-dealer-paused", base_dir=tmp_path)
    sim.new_shoe()
    async with _running(sim, "dealer-other-draw", 0.5) as (dealer, sub, topic):
        sub.offer(_message(topic, "deal", 1, {"kind": "box", "seat": 1}))
        async with asyncio.timeout(5):
            while dealer.cards_dealt < 1:
                await asyncio.sleep(0.01)
        # The next card asked for; then, while the dealer waits its pace, the fault's card.
        sub.offer(_message(topic, "deal", 2, {"kind": "box", "seat": 2}))
        await sim.fault("shoe", "misread")
        # The pause comes after the dealer's pace is over (it would have dealt by now).
        await asyncio.sleep(0.7)
        sub.offer(_message(topic, "paused", 3, None))
        await asyncio.sleep(0.8)
        assert dealer.cards_dealt == 1
        # Resumed: the dealer deals what the prompt now asks.
        sub.offer(_message(topic, "deal", 4, {"kind": "box", "seat": 2}))
        async with asyncio.timeout(5):
            while dealer.cards_dealt < 2:
                await asyncio.sleep(0.01)
