"""The notice after an alert's resolution says what it did, with the real ``ControllerService``.

A shift manager's review (D1): the console always said "alert X resolved: cancel", whatever
the controller did: a cancel whose round had already ended cancelled nothing, a cancel that
refunded said nothing of the refunds, and a table that other pauses kept paused looked
resumed. Now the notice says which round was cancelled and what was refunded, or that its
round was over and nothing was cancelled, and what still pauses the table.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401

JSON = {"accept": "application/json"}


async def resolve(http: httpx.AsyncClient, token: str, alert_id: str, action: str) -> str:
    form = {"csrf_token": token, "action": action, "reason": "checked at the table"}
    answer = await http.post(f"/console/alerts/{alert_id}/resolve", data=form, headers=JSON)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["message"])


async def test_a_cancel_says_what_it_refunded_and_what_still_pauses_the_table(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.svc.pause("bj1", user="dealer", reason="player dispute at seat 1")
    await table.card("5C")  # drawn while paused: held by an alert
    (alert,) = table.svc.alerts(state="open")
    token = await login(http, "manager")
    message = await resolve(http, token, alert["alert_id"], "cancel")
    assert message == (
        f"alert {alert['alert_id']} resolved: cancel: round bj1-R1 cancelled, "
        "10.00 refunded (1 wager); table still paused by dealer"
    )


async def test_a_cancel_of_a_round_already_over_says_nothing_was_cancelled(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.svc.pause("bj1", user="dealer", reason="player dispute at seat 1")
    await table.card("5C")
    await table.card("6C")
    first, second = table.svc.alerts(state="open")
    await table.svc.resolve_alert(first["alert_id"], "cancel", user="boss", reason="misdealt")
    assert table.svc.table_state("bj1")["phase"] == "settled"
    token = await login(http, "manager")
    message = await resolve(http, token, second["alert_id"], "cancel")
    assert message == (
        f"alert {second['alert_id']} resolved: cancel: round bj1-R1 was already over, "
        "nothing cancelled; table still paused by dealer"
    )


async def test_a_form_gets_the_outcome_in_its_notice(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.card("5C")  # the round is not paused: a hold of its own, and the only pause
    await table.card("6C")
    first, second = table.svc.alerts(state="open")
    token = await login(http, "manager")
    form = {"csrf_token": token, "action": "cancel", "reason": "misdealt at seat 1"}
    sent = await http.post(f"/console/alerts/{first['alert_id']}/resolve", data=form)
    assert sent.status_code == 303
    notice = parse_qs(urlsplit(sent.headers["location"]).query)["notice"]
    assert notice == [
        f"alert {first['alert_id']} resolved: cancel: round bj1-R1 cancelled, 10.00 refunded "
        f"(1 wager); table still paused by open alerts {second['alert_id']}"
    ]
