"""A card only the camera saw, accepted, end to end (see test_controller_camera_only_cards).

A simulated one-deck shoe on a real pty → its driver → a real broker → the controller, and a
camera publishing on the broker. The camera sees seat 1's 8S, which the shoe has not read;
a manager accepts it. Before (and up to table logic 3), the dealt 8S then waited for another
sighting and, one cross-check window later, a second `misscan` ("camera did not see 8S in
seat:1") paused the round, which never settled; and the shoe's read of that 8S, arriving
after the accept, was refused as a second 8S in a one-deck shoe.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from test_controller_alerts_e2e import Studio, make_studio

from studio.cards import Card
from studio.config import BrokerSettings

# Seat 1's 8S (the camera's alone, then the shoe's late read of it) and QH: 18, stands;
# the dealer's TD up and 7C in the hole: 17, stands.
LAYOUT = [Card("8", "S"), Card("T", "D"), Card("Q", "H"), Card("7", "C")]


@pytest.fixture
async def one_deck(broker: BrokerSettings, tmp_path: Path, table_id: str) -> AsyncIterator[Studio]:
    # The camera's lone sighting is a misscan when its window ends: a second, not three.
    async with make_studio(broker, tmp_path, table_id, decks=1, camera_window=1.0) as built:
        yield built


async def test_a_camera_only_card_accepted_then_read_late_by_the_shoe_plays_on(
    one_deck: Studio,
) -> None:
    studio = one_deck
    await studio.start_round()
    shoe = studio.sim.shoe
    shoe.cards[shoe.position : shoe.position + len(LAYOUT)] = LAYOUT
    await studio.camera("8S", "seat:1")  # the shoe has not read it
    alert = await studio.wait_alert("misscan")
    assert alert["message"] == "card 8S on seat:1 was not scanned by the shoe"
    await studio.resolve(alert, "accept")
    assert [c.code for c in studio.table.cards] == ["8S"]
    logged = studio.table.event_seq
    studio.sim.deal()  # the shoe's read of that 8S, late
    # Its event: `late_shoe_read` (before: `alert_raised`, an impossible card).
    await studio.wait(lambda: studio.table.event_seq > logged)
    assert not studio.table.paused, studio.open_codes()
    assert [c.code for c in studio.table.cards] == ["8S"]
    assert studio.table.shoe.cards_dealt == 1
    for _ in range(3):  # TD up, QH to seat 1, 7C in the hole
        await studio.deal()
    await studio.wait(lambda: studio.table.prompt().action == "wait_decisions")
    stand = {"id": "stand", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
    assert (await studio.service.submit_command(studio.table_id, stand))["accepted"]
    # Settles only once every sighting is decided: before, the second misscan paused it.
    await studio.wait(lambda: studio.table.phase != "dealing" or studio.table.paused)
    assert studio.table.last_settlement is not None, studio.open_codes()
    assert [a.code.value for a in studio.table.alerts.all()] == ["misscan"]
    assert studio.table.shoe.cards_dealt == 4
