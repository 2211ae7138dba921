"""Every HTTP answer under /api says ``Cache-Control: no-store`` and ``nosniff``.

A review: the console's pages had them (its SecurityHeaders covers /console only) but the
REST API's JSON (tables, rounds, players, alerts) had neither, so a browser or a shared
proxy could keep it. The event stream keeps its own ``Cache-Control`` and still streams;
the WebSocket is untouched.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import httpx
import websockets

from studio.contract import RoundEvent
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def app(fanout: Fanout) -> object:
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    return create_app(ctx)


def assert_api_headers(response: httpx.Response) -> None:
    assert response.headers.get_list("cache-control") == ["no-store"], response.headers
    assert response.headers.get_list("x-content-type-options") == ["nosniff"]


async def test_api_answers_are_not_cached_nor_sniffed() -> None:
    transport = httpx.ASGITransport(app=app(Fanout(bus=None)))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        answers = [
            await http.get("/api/health"),  # 200, a stranger's
            await http.get("/api/health", headers=AUTH),  # 200, a reader's
            await http.get("/api/tables"),  # 503: no database for sessions here
            await http.get("/api/tables", headers=AUTH),  # 503: no controller here
            await http.get("/api/nope", headers=AUTH),  # 404
            await http.get("/api/rounds?table=%00", headers=AUTH),  # RefuseNul's 400
            await http.post("/api/tables/bj1/pause", json={"reason": "test"}),  # 503
            await http.get("/api/tables", headers={"Authorization": "Bearer nope"}),  # 503
        ]
        assert [a.status_code for a in answers] == [200, 200, 503, 503, 404, 400, 503, 503]
        for answer in answers:
            assert_api_headers(answer)
        # Outside /api nothing is added here (the console, when mounted, adds its own).
        other = await http.get("/nope")
        assert "x-content-type-options" not in other.headers


async def test_the_event_stream_and_the_websocket_still_stream(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(app(fanout), port=0) as server:  # type: ignore[arg-type]
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as client:
            async with client.stream("GET", f"/api/tables/{table_id}/events") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                assert_api_headers(response)  # its own no-store, once
                while fanout.listener_count == 0:
                    await asyncio.sleep(0.01)
                event = RoundEvent(
                    table=table_id, round_id="r1", seq=7, ts=datetime.now(UTC), type="card"
                )
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event)
                data = None
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        data = json.loads(line[5:])
                        break
        assert data is not None and data["data"]["seq"] == 7
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            while fanout.listener_count == 0:
                await asyncio.sleep(0.01)
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event)
            got = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert got["data"]["seq"] == 7


async def test_the_api_description_is_not_cached_nor_sniffed() -> None:
    # /openapi.json is gated as a REST read, but until 2026-12-07 its answer (the map of
    # every route) carried neither header: a browser or proxy could keep it.
    transport = httpx.ASGITransport(app=app(Fanout(bus=None)))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        reader = await http.get("/openapi.json", headers=AUTH)
        assert reader.status_code == 200 and "/api/tables" in reader.json()["paths"]
        assert_api_headers(reader)
        stranger = await http.get("/openapi.json")
        assert stranger.status_code == 503  # no database for sessions here, as /api/tables
        assert_api_headers(stranger)
        # No HTML doc pages are served.
        assert (await http.get("/docs")).status_code == 404
