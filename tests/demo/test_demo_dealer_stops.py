"""The simulated dealer stops when cancelled, even as a prompt reaches it at that moment.

Python 3.11's ``asyncio.wait_for`` returns the inner result and drops the cancellation when
both land in the same turn of the loop (fixed in 3.12). The dealer polled its prompts with
it, so a demo or a test that cancelled the dealer while the controller was prompting it
could wait for it for ever (the likely cause of two controller tests timing out in CI;
seen in a loop of eight-table demo runs).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import aiomqtt

from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DealerPrompt, Topics
from studio.demo.dealer import DealerBot


async def test_a_cancelled_dealer_stops_while_a_prompt_arrives(tmp_path: Path) -> None:
    # The bus is never connected: subscriptions are served by hand, so that the prompt
    # and the cancellation can be made to land in the same turn of the loop.
    bus = MessageBus(BrokerSettings(url="mqtt://127.0.0.1:9"), "dealer-stops")
    sim = SimTable("t-dealer-stops", base_dir=tmp_path)
    dealer = DealerBot(bus, sim, pace=0.05)
    prompt = DealerPrompt(
        table=sim.id, round_id="r1", ts=datetime.now(UTC), action="wait", text="wait"
    )
    topic = Topics(sim.id).dealer_prompt
    for attempt in range(20):
        task = asyncio.create_task(dealer.run(), name="dealer")
        async with asyncio.timeout(5):
            while not bus._subs:  # the dealer has subscribed and waits for a prompt
                await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        message = aiomqtt.Message(topic, prompt.model_dump_json().encode(), 1, True, attempt, None)
        bus._subs[0].offer(message)
        await asyncio.sleep(0)  # the dealer's read of the prompt completes ...
        task.cancel()  # ... and the cancellation lands before the dealer resumes
        done, _ = await asyncio.wait({task}, timeout=2)
        assert task in done, f"attempt {attempt}: the dealer went on after being cancelled"
        assert task.cancelled()
        assert not bus._subs
