"""The dealer display says what the dealer must know, with the real ``ControllerService``.

A review of the dealer's prompts: a table paused by an alert showed "PAUSED: call manager"
and only the alert's id ("open alert majority-us-A7"), not what it is about ("deck out of
play, replace it and investigate").
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
