"""The dealer display says what the dealer must know, with the real ``ControllerService``.

A review of the dealer's prompts: a table paused by an alert showed "PAUSED: call manager"
and only the alert's id ("open alert majority-us-A7"), not what it is about ("deck out of
play, replace it and investigate"); and the cut card's coming out (the shoe's last round,
which seed 004's dealer announces) was not shown at all.
"""

from __future__ import annotations

import httpx
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401


def reason(page: str) -> str:
    return page.split('data-field="pause-reason"')[1].split("</p>")[0]


async def test_an_alerts_pause_shows_what_it_is_about_not_only_its_id(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.card("5C")  # drawn while the player decides: an alert holds it, the table pauses
    (alert,) = table.svc.alerts(state="open")
    assert table.svc.table_state("bj1")["paused"]
    await login(http, "dealer")
    for url in ("/console/dealer/bj1", "/console/fragments/dealer/bj1"):
        shown = reason((await http.get(url)).text)
        # The alert's message as a dealer may read it, cut for a screen read from afar; its id
        # stays in the title for the manager called.
        words = alert["message"] if len(alert["message"]) <= 60 else alert["message"][:57]
        assert words in shown, (url, shown)
        assert f'title="open alert {alert["alert_id"]}"' in shown


async def test_the_cut_card_out_is_shown_under_the_next_step(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await login(http, "dealer")
    assert 'data-field="prompt-notice"' not in (await http.get("/console/dealer/bj1")).text
    cut = {"device": "cut", "seq": 1, "event": "cut_card_detected", "data": {}}
    await table.feed("cutcard.event", cut)
    page = (await http.get("/console/fragments/dealer/bj1")).text
    assert (
        '<p class="prompt-notice" data-field="prompt-notice">'
        "Cut card out: last round of this shoe</p>" in page
    )
    assert "Wait for decisions (seat 1)" in page  # the step itself, as before
