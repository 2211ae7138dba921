"""Table WebSocket reconnect with ``?after=<event id>``: the frames missed while away, each
once, in order, as SSE's ``Last-Event-ID`` (tests/streams/test_sse_resume.py).

Each frame carries its event id as an ``"id"`` key (the id SSE sends), so a client knows
what to ask for. Before, frames had no id and a new socket always started with the latest
state: what came while the client was away was lost without a word.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import websockets
from stream_support import event, until
from websockets.asyncio.client import ClientConnection

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.contract import RoundState
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"


def state(table: str, phase: str) -> RoundState:
    return RoundState(table=table, round_id="r1", seq=0, ts=datetime.now(UTC), phase=phase)


def context(fanout: Fanout) -> WebContext:
    return WebContext(fanout=fanout, extras={"platform_token": TOKEN})


async def frames(ws: ClientConnection, count: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        return [json.loads(await ws.recv()) for _ in range(count)]


def seen(got: list[dict[str, Any]]) -> list[tuple[str, object, object]]:
    return [(f["channel"], f["data"].get("seq"), f["data"].get("phase")) for f in got]


async def test_frames_carry_their_id_and_after_gets_what_was_missed_once(
    broker: BrokerSettings, table_id: str
) -> None:
    async with MessageBus(broker, f"fanout-{table_id}") as bus:
        fanout = Fanout(bus)
        await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
        async with WebServer(create_app(context(fanout)), port=0) as server:
            url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
            auth = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx.AsyncClient(base_url=server.url, timeout=10, headers=auth) as http,
                http.stream("GET", f"/api/tables/{table_id}/events") as sse,
                websockets.connect(url) as ws,
            ):
                await until(lambda: fanout.listener_count == 2, "both streams listen")
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
                await fanout.emit("other-table", Channel.ROUND_EVENTS, event("other-table", 1))
                got = await frames(ws, 2)
                sse_ids = []
                async with asyncio.timeout(10):
                    async for line in sse.aiter_lines():
                        if line.startswith("id:"):
                            sse_ids.append(line[3:].strip())
                            if len(sse_ids) == 2:
                                break
            await until(lambda: fanout.listener_count == 0, "both streams closed")
            # Away: two events and a change of state go by.
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 2))
            await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "dealing"))
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 3))
            async with websockets.connect(f"{url}&after={got[-1]['id']}") as again:
                await until(lambda: fanout.listener_count == 1, "the resumed socket listens")
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 4))
                resumed = await frames(again, 4)
    assert seen(got) == [("round_state", 0, "betting"), ("round_events", 1, None)]
    # The frame as before, plus its id: the same id SSE gave the same message.
    assert all(set(f) == {"table", "channel", "data", "id"} for f in got + resumed)
    assert [f["id"] for f in got] == sse_ids
    assert seen(resumed) == [
        ("round_events", 2, None),
        ("round_state", 0, "dealing"),
        ("round_events", 3, None),
        ("round_events", 4, None),
    ]
    assert len({f["id"] for f in got + resumed}) == 6


async def test_after_the_opening_snapshot_replays_only_what_came_after_it(table_id: str) -> None:
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            (snapshot,) = await frames(ws, 1)
        await until(lambda: fanout.listener_count == 0, "the socket closed")
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
        async with websockets.connect(f"{url}&after={snapshot['id']}") as again:
            (first,) = await frames(again, 1)
    # Not the snapshot again: the one event that came after it.
    assert seen([first]) == [("round_events", 1, None)]


async def test_an_after_it_cannot_resume_from_says_so_then_starts_afresh_as_sse_does(
    table_id: str,
) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    other_run = "0badc0de" if fanout.run != "0badc0de" else "c0ffee00"
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}"
        async with websockets.connect(url) as ws:
            (snapshot,) = await frames(ws, 1)
        # A new socket asked for nothing: the latest state first, no reset.
        assert snapshot["channel"] == "round_state"
        await until(lambda: fanout.listener_count == 0, "the socket closed")
        for seq in range(1, 6):  # more than the table's kept history (3 // 2)
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
        stale_ids = [
            (snapshot["id"], "too_old"),
            (f"{other_run}-7", "unknown_run"),  # from before a restart
            (f"{fanout.run}-999", "not_sent"),  # past anything this run sent
        ]
        for stale, reason in stale_ids:
            async with websockets.connect(f"{url}&after={stale}") as again:
                reset, latest = await frames(again, 2)
            # Before: the latest state alone, as a new socket gets, and the client could
            # not tell that it had to catch up from REST.
            assert reset == {  # no "id": it names no place in the stream
                "table": table_id,
                "channel": "stream_reset",
                "data": {"table": table_id, "reason": reason, "after": stale},
            }, stale
            # Then afresh: the latest state, as a new socket gets.
            assert latest["channel"] == "round_state", stale
            assert latest["id"] == f"{fanout.run}-6", stale
        # Resuming from the state it started afresh with is honoured: no reset.
        async with websockets.connect(f"{url}&after={fanout.run}-6") as resumed:
            await until(lambda: fanout.listener_count == 1, "the resumed socket listens")
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 6))
            (after,) = await frames(resumed, 1)
    assert seen([after]) == [("round_events", 6, None)]
    assert after["id"] == f"{fanout.run}-7"


@pytest.mark.parametrize(
    "query",
    [
        "after=garbage",
        "after=",
        "after=abc-",
        "after=-5",
        "after=ABC-1",  # a run is lower-case hex
        "after=0badc0de-%C2%B2",  # "²" passes str.isdigit, not int()
        pytest.param(f"after=0badc0de-{'9' * 5000}", id="after=0badc0de-(5000 digits)"),
        "after=0badc0de-1%20",
        "after=0badc0de-1&after=0badc0de-2",
    ],
)
async def test_a_malformed_after_is_refused_with_400_and_a_reason(
    table_id: str, query: str
) -> None:
    fanout = Fanout(bus=None)
    async with WebServer(create_app(context(fanout)), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?token={TOKEN}&{query}"
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            async with websockets.connect(url):
                pass
        # A stranger learns nothing from it: refused as any stranger is.
        stranger = f"ws://127.0.0.1:{server.port}/ws/tables/{table_id}?{query}"
        with pytest.raises(websockets.exceptions.InvalidStatus) as stranger_refused:
            async with websockets.connect(stranger):
                pass
    assert refused.value.response.status_code == 400
    assert json.loads(refused.value.response.body)["detail"].startswith("after: ")
    assert stranger_refused.value.response.status_code == 403
    assert fanout.listener_count == 0
