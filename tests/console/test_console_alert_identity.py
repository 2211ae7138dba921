"""An action on an alert lands on the alert its form was drawn for, or on none (real service).

A review: the console and ``/api/alerts`` read the table's memory, where an alert stands
between the input raising it and the log's commit. When that write failed (the writers'
lock held past its timeout, the database away) the table was rebuilt from the log, its alert
counter went back, and the next alert raised took the id: a manager's ``cancel`` drawn for
"KS drawn before bets closed" cancelled the round through the alert that got its id. Now the
console's forms carry the alert's code and the time it was raised, the REST resolve and
acknowledge may (``alert_code``, ``alert_ts``), and the service refuses a mismatch under the
table's lock: 409, nothing changed or logged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from html import unescape

import httpx
import pytest
import sqlalchemy as sa
from console_helpers import login
from served_table import served_table
from test_console_hand_results import Round

from studio.console import UserStore
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.store.eventlog import events

JSON = {"accept": "application/json"}


@dataclass
class Studio:
    table: Round
    http: httpx.AsyncClient
    log: EventLog
    db: Database


async def _taking_bets(table: Round) -> None:
    census = {r: 32 for r in "A23456789TJQK"}
    shuffled = {"device": "shuf", "seq": 1, "event": "shuffle_complete"}
    await table.feed("shuffler.event", {**shuffled, "data": {"count": 416, "census": census}})
    loaded = {"device": "shoe", "seq": next(table.seq), "event": "shoe_loaded"}
    await table.feed("shoe.event", {**loaded, "data": {"shoe": "S1"}})
    await table.feed("timer", {}, dt=3)
    bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    await table.feed("game.command", bet)


@pytest.fixture
async def betting(database: Database, people: UserStore) -> AsyncIterator[Studio]:
    """Table bj1 of a real service, round bj1-R1 taking bets (one placed)."""
    async with served_table(database, _taking_bets) as (table, http, log):
        yield Studio(table, http, log, database)


async def refuse_alerts(db: Database) -> None:
    """The real database refuses every logged alert (a trigger): an input raising one fails."""
    async with db.engine.begin() as conn:
        if db.is_sqlite:
            await conn.execute(
                sa.text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON event_log "
                    "WHEN NEW.kind = 'out.alert' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )
            return
        await conn.execute(
            sa.text(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
            )
        )
        await conn.execute(
            sa.text(
                "CREATE TRIGGER refuse BEFORE INSERT ON event_log FOR EACH ROW "
                "WHEN (NEW.kind = 'out.alert') EXECUTE FUNCTION refuse()"
            )
        )


async def accept_alerts(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(
            sa.text("DROP TRIGGER refuse" if db.is_sqlite else "DROP TRIGGER refuse ON event_log")
        )


def resolve_form(page: str, alert_id: str) -> dict[str, str]:
    """The hidden fields of the alert's resolve form on ``page``."""
    form = page.split(f'action="/console/alerts/{alert_id}/resolve"')[1].split("</form>")[0]
    fields = re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', form)
    return {name: unescape(value) for name, value in fields}


async def manager_records(log: EventLog) -> list[str]:
    kinds = ["manager.action", "manager.refused"]
    return [r.kind for r in await log.read(table_id="bj1", kinds=kinds)]


async def test_a_resolution_drawn_for_an_alert_rolled_back_is_refused_on_the_next(
    betting: Studio,
) -> None:
    table, http, log = betting.table, betting.http, betting.log
    svc = table.svc
    token = await login(http, "manager")
    await refuse_alerts(betting.db)
    holder = Database(betting.db.url, schema=betting.db.schema)
    try:
        async with holder.engine.connect() as conn:
            # Another writer holds the log's lock: the card's input is applied in memory,
            # its alert shown, and its write waits (then fails on the trigger).
            await conn.begin()
            await holder.lock_writers(conn, events.name)
            drawn = asyncio.create_task(table.card("KS"))
            async with asyncio.timeout(10):
                while svc.tables["bj1"].alerts.find("bj1-A1") is None:
                    await asyncio.sleep(0.01)
            page = (await http.get("/console/alerts")).text
            await conn.rollback()
    finally:
        await holder.close()
    with pytest.raises(StoreError):
        await drawn
    assert "KS drawn before bets closed" in page  # the alert as the manager saw it
    stale = resolve_form(page, "bj1-A1")
    assert stale["alert_code"] == "game_before_time"
    assert svc.alerts() == []  # rolled back with its input

    # The next alert raised takes the id bj1-A1: another card, raised later.
    await accept_alerts(betting.db)
    table.clock.now += timedelta(seconds=5)
    data = {"device": "shoe", "seq": 2, "card": "QD", "shoe": "S1", "serial": "s2"}
    await table.feed("shoe.card", data)
    (now,) = svc.alerts()
    assert (now["alert_id"], now["message"]) == ("bj1-A1", "QD drawn before bets closed")
    assert now["ts"] != stale["alert_ts"]

    # The form drawn for the first is refused: nothing cancelled, nothing logged.
    sent = {**stale, "csrf_token": token, "action": "cancel", "reason": "KS came too early"}
    answer = await http.post("/console/alerts/bj1-A1/resolve", data=sent)
    assert answer.status_code == 303
    shown = (await http.get(answer.headers["location"])).text
    assert "alert bj1-A1 is not the one shown" in unescape(shown)
    assert "reload" in shown
    # Refused without its draft: "KS came too early" is not put in the new alert's form.
    assert "KS came too early" not in shown
    as_json = await http.post("/console/alerts/bj1-A1/resolve", data=sent, headers=JSON)
    assert as_json.status_code == 409, as_json.text
    assert svc.table_state("bj1")["phase"] == "betting"
    assert svc.alerts()[0]["state"] == "raised"
    assert await manager_records(log) == []

    # The REST API: the alert's code and time as seen (optional) are checked the same way.
    headers = {"x-csrf-token": token}
    url = "/api/alerts/bj1-A1"
    body = {"action": "cancel", "reason": "stale", "alert_ts": stale["alert_ts"]}
    refused = await http.post(f"{url}/resolve", json=body, headers=headers)
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"].startswith("alert bj1-A1 is not the one shown")
    other = {"alert_code": "card_mismatch"}
    refused = await http.post(f"{url}/acknowledge", json=other, headers=headers)
    assert refused.status_code == 409, refused.text
    assert svc.alerts()[0]["state"] == "raised"
    assert await manager_records(log) == []
    # Without them, as before (backward compatible); with the right ones, taken.
    done = await http.post(f"{url}/acknowledge", headers=headers)
    assert done.status_code == 200, done.text
    fresh = resolve_form((await http.get("/console/alerts")).text, "bj1-A1")
    assert fresh["alert_ts"] == now["ts"]
    sent = {**fresh, "csrf_token": token, "action": "void", "reason": "QD came too early"}
    answer = await http.post("/console/alerts/bj1-A1/resolve", data=sent, headers=JSON)
    assert answer.status_code == 200, answer.text
    assert svc.alerts()[0]["state"] == "resolved"
    assert await manager_records(log) == ["manager.action", "manager.action"]
