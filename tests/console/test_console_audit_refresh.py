"""/console/audit?refresh=abc is the audit page, not FastAPI's raw 422 JSON (console double).

``refresh`` was an int parameter, so any other value answered a JSON validation error
in place of the page. A value that is not a number other than 0 now asks for no fresh
check; the page's own button sends ``refresh=1``.
"""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa
from console_double import InMemoryController
from console_helpers import context, login

from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import create_app

HTML = {"accept": "text/html"}


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_bad_refresh_value_shows_the_page_without_a_fresh_check(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    log = EventLog(database)
    for n in range(3):
        await log.append("bj1", "card", {"n": n}, round_id="r1")
    ctx = context(database, fanout, controller)
    ctx.log = log
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "manager")
        assert 'class="chain ok"' in (await http.get("/console/audit", headers=HTML)).text
        async with database.engine.begin() as conn:
            await conn.execute(sa.text("UPDATE event_log SET payload = '{\"n\": 99}' WHERE id = 2"))
        for value in ("abc", "", "0", "1.5", "²"):
            page = await http.get("/console/audit", params={"refresh": value}, headers=HTML)
            assert page.status_code == 200, (value, page.text[:200])
            assert page.headers["content-type"].startswith("text/html")
            assert 'class="chain ok"' in page.text, value  # the cached check: no fresh one
        fresh = await http.get("/console/audit?refresh=1", headers=HTML)
        assert 'class="chain broken"' in fresh.text
