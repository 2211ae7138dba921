"""What a shift manager reads on the console is words, not the controller's data as it is
stored (a shift manager's walk, 2026-12-07, the LOW findings after dc9f88d).

* A round's events on the table page's timeline and the round page, and a resolved alert's
  before and after, were JSON (``{"card": "TH", "serial": null, ...}``): now words, as an
  alert's evidence (``shown_value``).
"""

from __future__ import annotations

import html
import re

import httpx
from console_double import InMemoryController
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401


def timeline_of(page: str) -> str:
    return page.split('class="timeline"')[1].split("</section>")[0]


def events_of(page: str) -> str:
    return page.split('id="round-events"')[1].split("</table>")[0]


async def test_a_rounds_events_read_as_words_on_the_table_and_round_pages(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    _, http = dealt
    await login(http, "manager")
    shown = {
        "timeline": timeline_of((await http.get("/console/tables/bj1")).text),
        "fragment": timeline_of((await http.get("/console/fragments/tables/bj1")).text),
        "round page": events_of((await http.get("/console/rounds/bj1-R1")).text),
    }
    for where, text in shown.items():
        # Before: {&#34;card&#34;: &#34;TH&#34;, ... &#34;serial&#34;: null ...} and raw times.
        assert "&#34;" not in text and "{" not in text and "null" not in text, where
        assert not re.search(r"\d\dT\d\d:\d\d", text), where  # no RFC 3339 time as it is
        words = html.unescape(re.sub(r"<[^>]+>", "", text))
        # A card dealt: its nested source and target in brackets, the time formatted.
        assert re.search(
            r"card TH, index 1, source \(device shoe, seq \d+, ts 2026-12-05 12:0\d:\d\d UTC\), "
            r"target \(hand 0, kind seat, seat 1\)",
            words,
        ), (where, words)
        # The round's opening names its whole rule set: folded under its first words.
        assert '<details class="words"><summary>' in text, where


async def test_a_resolved_alerts_before_and_after_read_as_words(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    alert_id = await controller.raise_mismatch("bj1", "5C", "6C")
    token = await login(client, "manager")
    await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={"action": "accept", "reason": "camera glare", "csrf_token": token},
    )
    row = (await client.get("/console/alerts")).text.split(f'id="resolved-{alert_id}"')[1]
    change = row.split('class="state-change"')[1].split("</details>")[0]
    assert "&#34;" not in change and "{" not in change and "null" not in change
    words = html.unescape(re.sub(r"<[^>]+>", "", change))
    assert "before (source scanner, card 5C, device shoe1), (source camera, card 6C" in words
    assert "after —" in words  # accepted: no card named
