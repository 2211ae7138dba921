"""The simulated dealer makes one shoe for each shoe the controller asks for.

The simulator shuffles and loads a shoe in one step, while the controller prompts
"shuffle", then "load_shoe" once it has seen the shuffler's count, and only then sees the
shoe loaded. The dealer answered the second prompt with another shoe, which reached the
controller during the round the first shoe had opened: an integrity alert ("shoe ...
loaded during round ...") that paused the table (seen in a loop of demo runs).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import DealerPrompt
from studio.demo.dealer import DealerBot


def _prompt(table: str, action: str, round_id: str | None = None) -> DealerPrompt:
    return DealerPrompt(
        table=table, round_id=round_id, ts=datetime.now(UTC), action=action, text=action
    )


@pytest.fixture
async def dealer(tmp_path: Path) -> DealerBot:
    # act() needs no bus: the prompts are handed to it directly.
    bus = MessageBus(BrokerSettings(url="mqtt://127.0.0.1:9"), "dealer-shoes")
    return DealerBot(bus, SimTable("t-dealer-shoes", base_dir=tmp_path), pace=0)


async def test_shuffle_then_load_shoe_makes_one_shoe(dealer: DealerBot) -> None:
    table = dealer.sim.id
    await dealer.act(_prompt(table, "shuffle"))
    await dealer.act(_prompt(table, "load_shoe"))
    assert (dealer.shoes, dealer.sim.shoes_loaded) == (1, 1)


async def test_each_shoe_change_makes_a_new_shoe(dealer: DealerBot) -> None:
    table = dealer.sim.id
    for action in ("shuffle", "load_shoe", "wait_bets", "deal", "collect", "change_shoe"):
        await dealer.act(_prompt(table, action, "r1"))
    await dealer.act(_prompt(table, "shuffle", "r1"))  # the controller catching up
    assert (dealer.shoes, dealer.sim.shoes_loaded) == (2, 2)
    assert dealer.cards_dealt == 1


async def test_a_shoe_asked_for_again_after_a_pause_is_made(dealer: DealerBot) -> None:
    # A shoe the controller refused (a wrong count, say) pauses the table; once the
    # manager has resolved it, "shuffle" asks for a new one.
    table = dealer.sim.id
    for action in ("shuffle", "paused", "shuffle"):
        await dealer.act(_prompt(table, action))
    assert (dealer.shoes, dealer.sim.shoes_loaded) == (2, 2)
