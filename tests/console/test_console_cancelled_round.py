"""A round a manager cancelled shows as cancelled and refunded, with the real ``ControllerService``.

A shift manager's review (D4): after a cancel the table header and the dealer display said
SETTLED (the controller's phase after a cancel as after a settlement), the notice said
"round cancelled" and nothing of the refunds, the dialog said the wagers were "voided", and
the round page showed "Status cancelled" under "Settled". Now the pages say "cancelled
(refunded)", the notice what was refunded, and the round page "Cancelled".
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401


async def test_a_cancelled_round_says_cancelled_and_refunded(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    _, http = dealt
    token = await login(http, "manager")
    page = (await http.get("/console/tables/bj1")).text
    assert "Every wager of round bj1-R1 is voided and its stake refunded." in page
    form = {"csrf_token": token, "reason": "table closing", "confirm": "yes", "round_id": "bj1-R1"}
    sent = await http.post("/console/tables/bj1/cancel", data=form)
    assert sent.status_code == 303
    notice = parse_qs(urlsplit(sent.headers["location"]).query)["notice"]
    assert notice == ["bj1: round bj1-R1 cancelled, 10.00 refunded (1 wager)"]

    cancelled = '<span class="phase phase-cancelled"'
    for url in ("/console/tables/bj1", "/console/fragments/tables/bj1", "/console/"):
        shown = (await http.get(url)).text
        assert cancelled in shown and ">cancelled (refunded)</span>" in shown, url
        assert "phase-settled" not in shown, url
    dealer = (await http.get("/console/dealer/bj1")).text
    assert '<p class="table-name">bj1 · cancelled (refunded)</p>' in dealer
    record = (await http.get("/console/rounds/bj1-R1")).text
    assert "<dt>Cancelled</dt>" in record and "(every wager refunded)" in record


async def test_a_settled_round_still_says_settled(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.stand()
    await login(http, "viewer")
    for url in ("/console/tables/bj1", "/console/"):
        shown = (await http.get(url)).text
        assert '<span class="phase phase-settled">settled</span>' in shown, url
        assert "cancelled (refunded)" not in shown, url
    assert "<dt>Settled</dt>" in (await http.get("/console/rounds/bj1-R1")).text
