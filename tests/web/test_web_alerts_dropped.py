"""REST: an action on an alert resolved so long ago that the controller dropped it from
memory (``alerts.KEEP_RESOLVED``) is refused as already resolved (409), not "no alert" (404).

Since 2026-12-06 a table's alert book keeps the newest resolved alerts, not every alert the
table ever raised; the older ones are in the event log and their round's record.
"""

from __future__ import annotations

import pytest
from alert_support import manager_api, raise_alert, resolve, two_tables

from studio.controller import alerts as alerts_module
from studio.store import Database


async def test_a_dropped_alert_is_already_resolved_not_unknown(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 3)
    async with two_tables(database) as service:
        raised = [raise_alert(service, "bj1", i) for i in range(6)]
        for i, alert in enumerate(raised):
            resolve(alert, 100 + i)
        book = service.tables["bj1"].alerts
        book.trim()  # as the table does after each input
        assert [a.alert_id for a in book.all()] == ["bj1-A4", "bj1-A5", "bj1-A6"]
        async with manager_api(database, service) as (http, headers):
            for alert_id, status, words in (
                ("bj1-A2", 409, "bj1-A2 is already resolved (long ago"),  # dropped
                ("bj1-A5", 409, "bj1-A5 is already resolved"),  # held
                ("bj1-A7", 404, "no alert"),  # never raised
            ):
                for verb, body in (
                    ("resolve", {"action": "accept", "reason": "checked the lid"}),
                    ("acknowledge", {}),
                ):
                    answer = await http.post(
                        f"/api/alerts/{alert_id}/{verb}", json=body, headers=headers
                    )
                    assert answer.status_code == status, (alert_id, verb, answer.text)
                    assert words in answer.json()["detail"], (alert_id, verb, answer.text)


def test_one_read_of_the_alerts_finds_only_alerts_the_book_holds() -> None:
    """``/api/alerts?limit=`` (at most MAX_ALERTS, the newest by when raised) answers every
    alert it asks for only while the book keeps at least that many resolved alerts, the
    newest by when raised (``alerts.KEEP_RESOLVED``): until 2026-12-06 only a comment tied
    the two (a review of the bounded book)."""
    from studio.web import api

    assert api.MAX_ALERTS <= alerts_module.KEEP_RESOLVED
