"""REST: a resolution naming a card that is no card is the request's fault (real controller).

``POST /api/alerts/{id}/resolve`` with ``"card": "ZZ"`` answered 409, which says the
action came at the wrong time; the console answers the same mistake 400. It is 422 now,
as a body that fails validation, and the alert stays open.
"""

from __future__ import annotations

from alert_support import manager_api, raise_alert, two_tables

from studio.store import Database


async def test_a_bad_card_code_is_422_not_409(database: Database) -> None:
    async with two_tables(database) as service:
        alert = raise_alert(service, "bj1", 0)
        async with manager_api(database, service) as (http, headers):
            answer = await http.post(
                f"/api/alerts/{alert.alert_id}/resolve",
                json={"action": "correct", "reason": "checked the lid", "card": "ZZ"},
                headers=headers,
            )
            assert answer.status_code == 422, answer.text
            assert "unknown rank" in answer.json()["detail"]
            assert alert.state == "raised"
            # The wrong time is still a 409: the alert resolved, then resolved again.
            done = await http.post(
                f"/api/alerts/{alert.alert_id}/resolve",
                json={"action": "accept", "reason": "checked the lid"},
                headers=headers,
            )
            assert done.status_code == 200, done.text
            again = await http.post(
                f"/api/alerts/{alert.alert_id}/resolve",
                json={"action": "accept", "reason": "checked the lid"},
                headers=headers,
            )
            assert again.status_code == 409, again.text
