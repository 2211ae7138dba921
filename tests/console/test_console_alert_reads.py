"""The console's alert reads on the real controller build only the alerts they show.

Until 2026-12-05 every page and fragment (the alert badge on each) built every alert the
studio ever raised, resolved ones too, to count the open ones; the alerts page built every
resolved alert to show the last 50; and an alert action built them all to check the alert
existed. Counted here (``Alert.message_model`` calls), not timed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from alert_support import count_built, raise_alert, resolve, two_tables
from console_helpers import context, login

from studio.console import UserStore
from studio.controller import ControllerService
from studio.controller.alerts import AlertCode
from studio.store import Database
from studio.web import create_app


@pytest.fixture
async def service(database: Database, people: UserStore) -> AsyncIterator[ControllerService]:
    async with two_tables(database) as svc:
        yield svc


@pytest.fixture
async def http(database: Database, service: ControllerService) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(context(database, service.fanout, service))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return count_built(monkeypatch)


async def test_pages_build_the_open_alerts_and_the_last_resolved_only(
    service: ControllerService, http: httpx.AsyncClient, built: list[str]
) -> None:
    old = [raise_alert(service, "bj1", i, AlertCode.CUT_CARD) for i in range(120)]
    for i, alert in enumerate(old):
        resolve(alert, 1000 + i)
    late = raise_alert(service, "bj2", 5, AlertCode.TIMEOUT)  # resolved last of all
    resolve(late, 5000)
    waiting = [
        raise_alert(service, "bj2", 200, AlertCode.CUT_CARD_MISSING),  # warning
        raise_alert(service, "bj1", 300, AlertCode.TIMEOUT),  # info
        raise_alert(service, "bj1", 200, AlertCode.CUT_CARD_MISSING),  # warning, same time
    ]
    service.tables["bj1"].alerts.acknowledge(waiting[2].alert_id, "dealer")
    opened = {a.alert_id for a in waiting}
    token = await login(http, "manager")

    built.clear()
    badge = await http.get("/console/fragments/alert-count")
    # The count, then a textless mark per open alert (console.js cues one it has not seen).
    assert badge.text.startswith("3<i hidden")
    assert set(re.findall(r'data-open-alert="([^"]+)"', badge.text)) == opened
    assert set(built) == opened  # before: all 124 alerts built

    built.clear()
    page = await http.get("/console/alerts")
    assert page.status_code == 200
    # Most severe first, the oldest first within a severity, bj1's before bj2's at one time.
    shown = [a.alert_id for a in (waiting[2], waiting[0], waiting[1])]
    at = [page.text.index(f'data-key="{alert_id}"') for alert_id in shown]
    assert at == sorted(at), page.text
    # The last 50 resolved, the last resolved first: the old alert resolved last leads.
    assert page.text.index(f"resolved-{late.alert_id}") < page.text.index(
        f"resolved-{old[-1].alert_id}"
    )
    assert f'resolved-{old[-50].alert_id}"' not in page.text
    assert f'resolved-{old[-49].alert_id}"' in page.text
    resolved_built = [alert_id for alert_id in built if alert_id not in opened]
    # The page builds the open alerts twice (the badge and the list) and the last 50.
    assert len(resolved_built) == 50, len(resolved_built)  # before: 121 resolved, twice

    built.clear()
    form = {"csrf_token": token}
    acknowledged = await http.post(f"/console/alerts/{waiting[0].alert_id}/acknowledge", data=form)
    assert acknowledged.status_code == 303
    assert service.tables["bj2"].alerts.get(waiting[0].alert_id).state == "acknowledged"
    missing = await http.post(
        "/console/alerts/bj1-A999/acknowledge", data=form, headers={"accept": "application/json"}
    )
    assert missing.status_code == 404
    assert not set(built) - opened  # before: every alert built to look one up
