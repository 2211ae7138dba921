"""The resolve form pre-selects no resolution, and a resolve without one is refused clearly.

A review: the first allowed resolution (usually ``accept``) was checked in every alert's
form, so a manager who typed a reason and pressed Enter accepted the card without having
chosen. The browser side (Enter refused until a choice is made) is in
``test_console_browser_alert_forms.py``.
"""

from __future__ import annotations

import re

import httpx
from console_double import InMemoryController
from console_helpers import login


async def test_no_resolution_is_checked_and_none_sent_resolves_nothing(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    token = await login(client, "manager")
    for url in ("/console/alerts", "/console/fragments/alerts"):
        page = (await client.get(url)).text
        form = page.split(f'action="/console/alerts/{alert_id}/resolve"')[1].split("</form>")[0]
        radios = re.findall(r'<input type="radio" name="action"[^>]*>', form)
        assert len(radios) == 4, form
        assert not [r for r in radios if "checked" in r], radios
        assert all("required" in r for r in radios)

    sent = {"reason": "looked at it", "csrf_token": token}
    answer = await client.post(
        f"/console/alerts/{alert_id}/resolve", data=sent, headers={"accept": "application/json"}
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == f"choose a resolution: alert {alert_id} was not resolved"
    form = await client.post(f"/console/alerts/{alert_id}/resolve", data=sent)
    assert form.status_code == 303
    shown = (await client.get(form.headers["location"])).text
    assert f"choose a resolution: alert {alert_id} was not resolved" in shown
    assert not [c for c in controller.calls if c[0] == "resolve_alert"]
    assert controller.alerts(state="resolved") == []
