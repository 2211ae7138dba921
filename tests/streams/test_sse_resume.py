"""SSE reconnect with Last-Event-ID: the messages missed while away, each once, in order.

A real server and HTTP client; the fan-out without a broker.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from studio.contract import RoundEvent, RoundState
from studio.streams import Channel, Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
Event = tuple[str | None, str, dict[str, Any]]  # (id, event, data)


def event(table: str, seq: int) -> RoundEvent:
    return RoundEvent(
        table=table, round_id="r1", seq=seq, ts=datetime.now(UTC), type="card", data={"n": seq}
    )


def state(table: str, phase: str) -> RoundState:
    return RoundState(table=table, round_id="r1", seq=0, ts=datetime.now(UTC), phase=phase)


async def sse_events(response: httpx.Response) -> AsyncIterator[Event]:
    """(id, event, data) of each SSE event of a response, as they come."""
    ident: str | None = None
    name = ""
    data: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            ident = line[3:].strip()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = json.loads(line[5:])
        elif line == "" and name:
            yield ident, name, data
            ident, name = None, ""


async def take(response: httpx.Response, count: int) -> list[Event]:
    got: list[Event] = []

    async def run() -> None:
        async for item in sse_events(response):
            got.append(item)
            if len(got) == count:
                return

    await asyncio.wait_for(run(), 5)
    return got


async def listening(fanout: Fanout, count: int) -> None:
    while fanout.listener_count < count:
        await asyncio.sleep(0.01)


async def test_a_reconnect_with_last_event_id_gets_what_it_missed_once(table_id: str) -> None:
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            async with http.stream("GET", url) as first:
                await listening(fanout, 1)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
                await fanout.emit("other-table", Channel.ROUND_EVENTS, event("other-table", 1))
                got = await take(first, 2)
            assert [name for _, name, _ in got] == ["round_state", "round_events"]
            assert all(ident for ident, _, _ in got)  # every event carries its id
            last = got[-1][0]
            while fanout.listener_count:
                await asyncio.sleep(0.01)
            # Away: two events and a change of state go by.
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 2))
            await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "dealing"))
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 3))
            async with http.stream("GET", url, headers={"Last-Event-ID": str(last)}) as again:
                await listening(fanout, 1)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 4))
                resumed = await take(again, 4)
    # Before: no id, and a reconnect got the latest state, then only what came after it
    # (events 2 and 3 lost without a word).
    seen = [(name, data["data"].get("seq"), data["data"].get("phase")) for _, name, data in resumed]
    assert seen == [
        ("round_events", 2, None),
        ("round_state", 0, "dealing"),
        ("round_events", 3, None),
        ("round_events", 4, None),
    ]
    assert len({ident for ident, _, _ in got + resumed}) == 6


async def test_a_last_event_id_it_cannot_resume_from_starts_afresh(table_id: str) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            async with http.stream("GET", url) as first:
                (seen,) = await take(first, 1)
            while fanout.listener_count:
                await asyncio.sleep(0.01)
            for seq in range(1, 6):  # more than the table's kept history (3 // 2)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
            for stale in (str(seen[0]), "another-run-7", "garbage"):
                headers = {"Last-Event-ID": stale}
                async with http.stream("GET", url, headers=headers) as again:
                    (first_again,) = await take(again, 1)
                # Too far back, from another run of the server, or not an id: the latest
                # state, as a new connection gets (the client catches up from REST).
                assert first_again[1] == "round_state", stale


async def test_a_resumed_stream_has_room_for_what_comes_live(table_id: str) -> None:
    fanout = Fanout(bus=None, listener_queue=10)
    async with fanout.listen(table_id) as first:
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
        message = first.queue.get_nowait()
        assert message is not None
        mark = first.event_id(message)
    for seq in range(2, 7):  # 5 missed: the most the table keeps with a queue of 10
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
    async with fanout.listen(table_id, resume=mark) as again:
        for seq in range(7, 12):  # as many again come live before the client reads
            await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
        assert again.ended is None  # not cut as too slow the moment it resumed
        got = [again.queue.get_nowait() for _ in range(10)]
    assert [m.data["seq"] for m in got if m is not None] == list(range(2, 12))


# Ids of this run whose number is no ASCII digits: "²" (a Latin-1 header byte, so a real
# client can send it) passes str.isdigit but int() refuses it, as it refuses more than
# 4300 digits; "١٢" (Arabic-Indic, sent as UTF-8) int() would read as 12.
MALFORMED_NUMBERS = [
    pytest.param(b"\xb2", id="superscript-two"),
    pytest.param(b"1\xb2", id="1-superscript-two"),
    pytest.param("١٢".encode(), id="arabic-indic-12"),
    pytest.param(b"9" * 5000, id="5000-digits"),
    pytest.param(b"9" * 19, id="19-digits"),
    pytest.param(b"-1", id="negative"),
    pytest.param(b"", id="empty"),
    pytest.param(b"+1", id="plus-one"),
    pytest.param(b"1_0", id="underscore"),
]


@pytest.mark.parametrize("number", MALFORMED_NUMBERS)
async def test_a_malformed_last_event_id_of_this_run_starts_afresh(
    table_id: str, number: bytes
) -> None:
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        headers = {b"Last-Event-ID": f"{fanout.run}-".encode() + number}
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            async with http.stream("GET", url, headers=headers) as again:
                assert again.status_code == 200
                (first,) = await take(again, 1)
    # Not an id of this run's: the latest state, as a new connection gets.
    assert first[1] == "round_state"
    assert first[0] == f"{fanout.run}-2"


@pytest.mark.parametrize(
    "number",
    ["²", "1²", "١", "9" * 5000, "9" * 19, "-1", "", "+1", " 1", "1_0"],
    ids=[
        "sup2",
        "1sup2",
        "arabic-1",
        "5000-digits",
        "19-digits",
        "neg",
        "empty",
        "plus",
        "sp",
        "u",
    ],
)
async def test_the_fanout_resumes_from_no_malformed_number(table_id: str, number: str) -> None:
    # "١" (Arabic-Indic one) int() reads as 1: it must not resume from the state (id 1).
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 1))
    async with fanout.listen(table_id, resume=f"{fanout.run}-{number}") as listener:
        got = listener.queue.get_nowait()
    assert got is not None and got.channel is Channel.ROUND_STATE
