"""The cut point counts a refused card at once, end to end (see test_controller_shoe_penetration).

A simulated one-deck shoe on a real pty → its driver → a real broker → the controller. The
rule set cuts the shoe at its 5th card; the simulated cut card lies deeper, so the sensor
never reports it and the rule set's cut point must end the shoe. A foreign copy of the
first card follows it out: an impossible card, voided. Up to table logic 3 that card never
counted, and the round that took the shoe's 5th card out was not its last.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_controller_alerts_e2e import Studio, make_studio

from studio.cards import Card
from studio.config import BrokerSettings
from studio.contract import ShoeCard, Topics

# Seat 1's 8S and QH (18, stands), the dealer's TD up and 7C in the hole (17, stands).
LAYOUT = [Card("8", "S"), Card("8", "S"), Card("T", "D"), Card("Q", "H"), Card("7", "C")]


@pytest.fixture
async def early_cut(broker: BrokerSettings, tmp_path: Path, table_id: str) -> AsyncIterator[Studio]:
    shoe = {"cut_card_fraction": "0.1"}  # the 5th card
    async with make_studio(broker, tmp_path, table_id, decks=1, shoe=shoe) as built:
        yield built


async def test_an_impossible_card_voided_ends_the_shoe_at_the_cut_point(early_cut: Studio) -> None:
    studio = early_cut
    await studio.start_round()
    shoe = studio.sim.shoe
    shoe.cards[shoe.position : shoe.position + len(LAYOUT)] = LAYOUT
    await studio.deal()  # 8S to seat 1
    studio.sim.deal()  # the foreign 8S
    alert = await studio.wait_alert("impossible_card")
    assert studio.table.shoe.cards_dealt == 2  # out of the shoe, though refused
    await studio.resolve(alert, "void")
    for _ in range(3):  # TD up, QH to seat 1, 7C in the hole
        await studio.deal()
    await studio.wait(lambda: studio.table.prompt().action == "wait_decisions")
    stand = {"id": "stand", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
    assert (await studio.service.submit_command(studio.table_id, stand))["accepted"]
    await studio.wait(lambda: studio.table.phase != "dealing")
    settled = studio.table.last_settlement
    assert settled is not None and settled["reshuffle_after_round"] is True
    assert studio.table.phase == "shoe_change"
    assert studio.table.shoe.cards_dealt == 5


async def test_a_card_reported_twice_counts_once(early_cut: Studio) -> None:
    studio = early_cut
    await studio.start_round()
    await studio.deal()
    (dealt,) = studio.table.cards
    device, seq = dealt.source["device"], dealt.source["seq"]
    topic = Topics(studio.table_id).shoe_cards
    shoe_id = studio.table.shoe.shoe_id or "-"

    def read(card: str, seq: int) -> ShoeCard:
        return ShoeCard(device=device, seq=seq, ts=datetime.now(UTC), card=card, shoe=shoe_id)

    # The same event again (a driver re-sending it), then the shoe's next one, in order.
    await studio.camera_bus.publish(topic, read(dealt.code, seq))
    await studio.camera_bus.publish(topic, read("2H", seq + 1))
    await studio.wait(lambda: studio.table.shoe.cards_dealt > 1)
    assert studio.table.shoe.cards_dealt == 2
    assert [c.code for c in studio.table.cards] == [dealt.code, "2H"]
