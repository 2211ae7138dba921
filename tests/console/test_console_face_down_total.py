"""A hand of face-down cards only shows no total (controller: the in-memory TEST DOUBLE).

A shift manager's review (D7): on a table that deals the dealer's hole card first, the
table page and the dealer display showed "?? 0" once only that card was out: the state's
total counts no hidden card. Now no total is shown until a card is face up.
"""

from __future__ import annotations

import httpx
from console_double import InMemoryController
from console_helpers import login


def dealer_hand(page: str) -> str:
    return page.split('data-role="dealer">')[1].split("</div>\n  </div>")[0]


async def test_the_dealers_hole_card_alone_shows_no_total(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    controller._state["bj1"]["dealer"] = {"cards": ["??"], "total": 0}
    await login(client, "dealer")
    for url in ("/console/tables/bj1", "/console/dealer/bj1", "/console/"):
        hand = dealer_hand((await client.get(url)).text)
        assert 'data-card="??"' in hand and 'class="total"' not in hand, (url, hand)
    controller._state["bj1"]["dealer"] = {"cards": ["??", "7C"], "total": 7}
    for url in ("/console/tables/bj1", "/console/dealer/bj1"):
        hand = dealer_hand((await client.get(url)).text)
        assert '<span class="total">7</span>' in hand, (url, hand)
