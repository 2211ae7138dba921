"""A stream's `?token=` given twice, and a Last-Event-ID with non-ASCII characters.

Only the last `token` was compared, so `?token=bad&token=GOOD` was let in; and the
stream_reset of an id such as "é-1" echoed it as the header's Latin-1 reading ("Ã©-1").
A real server and HTTP client; the fan-out without a broker.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx

from studio.contract import RoundState
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"


async def first_event(response: httpx.Response) -> tuple[str, dict[str, object]]:
    name = ""
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            return name, json.loads(line[5:])
    raise AssertionError("no event")


async def test_a_token_given_twice_is_refused(table_id: str) -> None:
    fanout = Fanout(bus=None)
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            for query in (f"token=bad&token={TOKEN}", f"token={TOKEN}&token={TOKEN}"):
                async with http.stream("GET", f"{url}?{query}") as twice:
                    assert twice.status_code == 401, query
            async with http.stream("GET", f"{url}?token={TOKEN}") as once:
                assert once.status_code == 200


async def test_a_non_ascii_last_event_id_is_echoed_as_sent(table_id: str) -> None:
    fanout = Fanout(bus=None)
    state = RoundState(table=table_id, round_id="r1", seq=0, ts=datetime.now(UTC), phase="betting")
    await fanout.emit(table_id, Channel.ROUND_STATE, state)
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    headers = {"Authorization": f"Bearer {TOKEN}", "Last-Event-ID": "é-1".encode()}
    async with WebServer(create_app(ctx), port=0) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            async with http.stream(
                "GET", f"/api/tables/{table_id}/events", headers=headers
            ) as response:
                name, data = await first_event(response)
    assert name == "stream_reset"
    assert data["data"] == {"table": table_id, "reason": "not_an_id", "after": "é-1"}
