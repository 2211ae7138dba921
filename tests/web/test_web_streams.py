from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import httpx
import pytest
import websockets

from studio.config import StudioConfig, TableSettings
from studio.contract import RoundEvent, RoundState
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app


def event(table: str, seq: int) -> RoundEvent:
    return RoundEvent(
        table=table, round_id="r1", seq=seq, ts=datetime.now(UTC), type="card", data={"card": "QH"}
    )


TOKEN = "test-platform-token"


def context(fanout: Fanout) -> WebContext:
    ctx = WebContext(fanout=fanout)
    ctx.extras["platform_token"] = TOKEN
    return ctx


async def test_streams_refuse_strangers(table_id: str) -> None:
    async with WebServer(create_app(context(Fanout(bus=None))), port=0) as server:
        with pytest.raises(websockets.exceptions.InvalidStatus):
            async with websockets.connect(f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}"):
                pass
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            response = await client.get(f"/api/tables/{table_id}/events")
            assert response.status_code == 401
            wrong = await client.get(
                f"/api/tables/{table_id}/events", headers={"Authorization": "Bearer nope"}
            )
            assert wrong.status_code == 401


async def test_websocket_gets_latest_state_then_live_events(table_id: str) -> None:
    fanout = Fanout(bus=None)
    state = RoundState(table=table_id, round_id="r1", seq=0, ts=datetime.now(UTC), phase="betting")
    await fanout.emit(table_id, Channel.ROUND_STATE, state)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert first["channel"] == "round_state" and first["data"]["phase"] == "betting"
            while fanout.listener_count == 0:
                await asyncio.sleep(0.01)
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
            await fanout.emit("other-table", Channel.ROUND_EVENTS, event("other-table", 1))
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 2))
            got = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(2)]
    assert [g["data"]["seq"] for g in got] == [1, 2]
    assert all(g["table"] == table_id for g in got)


async def test_sse_streams_round_events(table_id: str) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as client:
            async with client.stream("GET", f"/api/tables/{table_id}/events") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                while fanout.listener_count == 0:
                    await asyncio.sleep(0.01)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 7))
                lines = response.aiter_lines()
                data = None
                async for line in lines:
                    if line.startswith("data:"):
                        data = json.loads(line[5:])
                        break
    assert data is not None and data["data"]["seq"] == 7 and data["channel"] == "round_events"


async def test_a_listener_that_cannot_keep_up_is_cut_off(table_id: str) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    async with fanout.listen(table_id) as listener:
        for seq in range(1, 6):
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
        assert listener.overflowed
        assert fanout.listener_count == 0
        assert await listener.queue.get() is None  # end of stream, not stale events


async def test_a_token_with_non_ascii_characters_is_refused_not_a_server_error(
    table_id: str,
) -> None:
    async with WebServer(create_app(context(Fanout(bus=None))), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token=%C3%A9"
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            async with websockets.connect(url):
                pass
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            by_query = await client.get(f"/api/tables/{table_id}/events", params={"token": "é"})
            by_header = await client.get(
                f"/api/tables/{table_id}/events", headers={"Authorization": b"Bearer \xe9"}
            )
    assert refused.value.response.status_code == 403  # closed (1008) before the handshake
    assert by_query.status_code == 401 and by_header.status_code == 401


async def test_a_stream_of_a_table_the_controller_does_not_have_is_refused_with_404(
    database: Database, table_id: str
) -> None:
    log, fanout = EventLog(database), Fanout(bus=None)
    config = StudioConfig(tables=[TableSettings(id=table_id, ruleset="clubhouse")])
    async with ControllerService(config, None, log, fanout, timers=False) as controller:
        ctx = WebContext(fanout=fanout, log=log, db=database, controller=controller)
        ctx.extras["platform_token"] = TOKEN
        async with WebServer(create_app(ctx), port=0) as server:
            base = f"ws://127.0.0.1:{server.port}/ws/tables"
            async with websockets.connect(f"{base}/{table_id}?token={TOKEN}") as ws:
                known = json.loads(await asyncio.wait_for(ws.recv(), 5))
            with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
                async with websockets.connect(f"{base}/{table_id}x?token={TOKEN}"):
                    pass
            auth = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as client:
                sse = await client.get(f"/api/tables/{table_id}x/events")
    assert known["table"] == table_id
    assert refused.value.response.status_code == 404
    assert sse.status_code == 404
    # Said as REST says it (until 2026-12-07 the streams said "no such table").
    unknown = f"no table '{table_id}x'"
    assert json.loads(refused.value.response.body or b"{}") == {"detail": unknown}
    assert sse.json() == {"detail": unknown}
