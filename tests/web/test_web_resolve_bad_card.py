"""REST: a resolution naming a card that is no card is the request's fault (real controller).

``POST /api/alerts/{id}/resolve`` with ``"card": "ZZ"`` answered 409, which says the
action came at the wrong time; the console answers the same mistake 400. It is 422 now,
as a body that fails validation, and the alert stays open.
"""

from __future__ import annotations

import httpx
from alert_support import raise_alert, two_tables
from argon2 import PasswordHasher
from http_support import form_token

from studio.console import ConsoleSettings, UserStore
from studio.store import Database
from studio.web import WebContext, create_app

PASSWORD = "correct horse battery"


async def test_a_bad_card_code_is_422_not_409(database: Database) -> None:
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await UserStore(database, hasher=hasher).add("boss", PASSWORD, "manager", by="test")
    settings = ConsoleSettings(argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1)
    async with two_tables(database) as service:
        alert = raise_alert(service, "bj1", 0)
        ctx = WebContext(
            fanout=service.fanout, db=database, controller=service, extras={"console": settings}
        )
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            page = await http.get("/console/login")
            form = {"username": "boss", "password": PASSWORD, "csrf_token": form_token(page.text)}
            assert (await http.post("/console/login", data=form)).status_code == 303
            headers = {"X-CSRF-Token": http.cookies["studio_csrf"]}
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
