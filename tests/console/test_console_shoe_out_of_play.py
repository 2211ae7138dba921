"""The table page's shoe panel says when the shoe is out of play (controller: the TEST DOUBLE).

A review of the manager's console: after a shuffler count mismatch the state said
``out_of_play: true`` and the alert "deck out of play, replace it and investigate", but the
panel showed "Verified yes" and nothing about the shoe being out of play.
"""

from __future__ import annotations

import httpx
from console_double import InMemoryController
from console_helpers import login


def _panel(page: str) -> str:
    return page.split('<dl class="shoe">')[1].split("</dl>")[0]


async def test_a_shoe_out_of_play_is_shown_so(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await login(client, "viewer")
    in_play = _panel((await client.get("/console/tables/bj1")).text)
    assert "out of play" not in in_play and "<dt>Verified</dt><dd>yes</dd>" in in_play
    controller._state["bj1"]["shoe"]["out_of_play"] = True
    panel = _panel((await client.get("/console/tables/bj1")).text)
    assert '<dt>In play</dt><dd class="warn" data-field="out-of-play">no: out of play</dd>' in (
        panel
    )
