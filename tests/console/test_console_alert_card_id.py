"""An open alert's card shows its id (controller: the in-memory TEST DOUBLE).

A shift manager's review (D5): the console's messages name alerts by id ("resumed; still
paused by open alerts bj1-A2", "...held by bj1-A6: resolve that one"), but an open alert's
card showed severity, code, table, round, age and state, not the id: only the resolved
list did. With three alerts of one code on a round the manager could not tell which.
"""

from __future__ import annotations

import httpx
from console_double import InMemoryController
from console_helpers import login


async def test_each_open_alert_card_shows_its_id(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {2: "p-2"})
    first = await controller.raise_mismatch("bj1", "QH", "QS")
    second = await controller.raise_mismatch("bj1", "9C", "9D")
    await login(client, "viewer")
    for url in ("/console/alerts", "/console/fragments/alerts", "/console/alerts?table=bj1"):
        page = (await client.get(url)).text
        for alert_id in (first, second):
            card = page.split(f'id="alert-{alert_id}"')[1].split("</article>")[0]
            header = card.split("<header>")[1].split("</header>")[0]
            assert f'<span class="alert-id" data-field="alert-id">{alert_id}</span>' in header
