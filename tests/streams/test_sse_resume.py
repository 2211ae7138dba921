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


def other_run(fanout: Fanout) -> str:
    """A run prefix that is not ``fanout``'s (another run of the server)."""
    return "0badc0de" if fanout.run != "0badc0de" else "c0ffee00"


def stale_ids(fanout: Fanout, forgotten: str) -> list[Any]:
    """(Last-Event-ID, the reason it cannot be resumed from) for each reason SSE says."""
    return [
        (forgotten, "too_old"),
        (f"{other_run(fanout)}-7", "unknown_run"),
        (f"{fanout.run}-999", "not_sent"),
        ("garbage", "not_an_id"),
        ("another-run-7", "not_an_id"),  # not hex: no run's id
    ]


async def test_a_last_event_id_it_cannot_resume_from_says_so_then_starts_afresh(
    table_id: str,
) -> None:
    fanout = Fanout(bus=None, listener_queue=3)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            async with http.stream("GET", url) as first:
                (seen,) = await take(first, 1)
            # A new connection asked for nothing: the latest state first, no reset.
            assert seen[1] == "round_state"
            while fanout.listener_count:
                await asyncio.sleep(0.01)
            for seq in range(1, 6):  # more than the table's kept history (3 // 2)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
            for stale, reason in stale_ids(fanout, str(seen[0])):
                headers = {"Last-Event-ID": stale}
                async with http.stream("GET", url, headers=headers) as again:
                    reset, latest = await take(again, 2)
                # Before: the latest state alone, as a new connection gets, and the client
                # could not tell that it had to catch up from REST.
                assert reset == (
                    None,  # no id: the client's last id stays the one it sent
                    "stream_reset",
                    {
                        "table": table_id,
                        "channel": "stream_reset",
                        "data": {"table": table_id, "reason": reason, "after": stale},
                    },
                ), stale
                # Then afresh: the latest state, named by the stream's position.
                assert latest[:2] == (f"{fanout.run}-6", "round_state"), stale
            # Resuming from the state it started afresh with is honoured: no reset.
            headers = {"Last-Event-ID": f"{fanout.run}-6"}
            async with http.stream("GET", url, headers=headers) as resumed:
                await listening(fanout, 1)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 6))
                (after,) = await take(resumed, 1)
    assert after[:2] == (f"{fanout.run}-7", "round_events")
    assert after[2]["data"]["seq"] == 6


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
                reset, first = await take(again, 2)
    # Not an id of this run's: it says so, then the latest state, as a new connection gets.
    assert reset[:2] == (None, "stream_reset")
    assert reset[2]["data"]["reason"] == "not_an_id"
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
        reset = listener.queue.get_nowait()
        got = listener.queue.get_nowait()
    assert reset is not None and reset.channel is Channel.STREAM_RESET
    assert reset.data["reason"] == "not_an_id"
    assert got is not None and got.channel is Channel.ROUND_STATE


async def test_the_fanout_says_why_it_does_not_resume_and_only_then(table_id: str) -> None:
    fanout = Fanout(bus=None, listener_queue=4)  # keeps each table's last 2
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))  # 1
    for seq in range(1, 4):  # 2, 3, 4: the state (1) and event 1 (2) are forgotten
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
    cases: list[tuple[str | None, str | None]] = [
        (f"{fanout.run}-1", "too_old"),
        (f"{other_run(fanout)}-3", "unknown_run"),
        (f"{fanout.run}-5", "not_sent"),
        (f"{fanout.run}-x", "not_an_id"),
        (f"{fanout.run}-2", None),  # what came after it is all kept: honoured
        (f"{fanout.run}-4", None),  # the newest: honoured, nothing missed
        (None, None),  # a new stream asked for nothing
    ]
    for resume, reason in cases:
        async with fanout.listen(table_id, resume=resume) as listener:
            got = []
            while not listener.queue.empty():
                message = listener.queue.get_nowait()
                assert message is not None
                got.append(message)
        resets = [m for m in got if m.channel is Channel.STREAM_RESET]
        if reason is None:
            assert not resets, resume
            continue
        assert got[0].channel is Channel.STREAM_RESET, resume
        assert resets == got[:1], resume  # once, first
        assert got[0].data == {"table": table_id, "reason": reason, "after": resume}
        assert listener.event_id(got[0]) is None  # names no place in the output
        assert [m.channel for m in got[1:]] == [Channel.ROUND_STATE], resume


async def test_sse_resumes_from_after_in_the_query_and_the_header_wins(table_id: str) -> None:
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))  # 1
    for seq in range(1, 4):  # 2, 3, 4
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            # As a client that cannot set headers: the token and the id both in the URL.
            query = {"token": TOKEN, "after": f"{fanout.run}-2"}
            async with http.stream("GET", url, params=query) as resumed:
                assert resumed.status_code == 200
                await listening(fanout, 1)
                await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, 4))  # 5
                got = await take(resumed, 2)
            # An EventSource's reconnect sends the URL's ?after= again with its newer id.
            header = {"Last-Event-ID": f"{fanout.run}-3"}
            async with http.stream("GET", url, params=query, headers=header) as again:
                (newest,) = await take(again, 1)
    # Before: ?after= was ignored, and the stream began with the latest state (id 4), no
    # stream_reset: events 2 and 3 were lost while the client took it for a resume.
    assert [(ident, data["data"]["seq"]) for ident, _, data in got] == [
        (f"{fanout.run}-3", 2),
        (f"{fanout.run}-4", 3),
    ]
    assert (newest[0], newest[2]["data"]["seq"]) == (f"{fanout.run}-4", 3)


async def test_sse_refuses_a_malformed_after_and_a_query_parameter_it_does_not_take(
    table_id: str,
) -> None:
    fanout = Fanout(bus=None)
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            answers = {}
            for query in ("after=garbage", "after=", f"after={fanout.run}-1&after={fanout.run}-2"):
                answers[query] = await http.get(f"{url}?{query}")
            unknown = await http.get(f"{url}?afer={fanout.run}-1&bogus=1")
            stranger = await http.get(f"{url}?bogus=1", headers={"Authorization": "Bearer x"})
    # Before: each answered 200 with a stream started afresh, as if nothing had been asked.
    for query, answer in answers.items():
        assert answer.status_code == 400, query
        assert answer.json()["detail"].startswith("after: "), query
    assert unknown.status_code == 422
    assert unknown.json()["detail"] == [
        {
            "type": "extra_forbidden",
            "loc": ["query", name],
            "msg": (
                f"unknown query parameter {name!r}: this endpoint takes token, after, "
                "lastEventId, _"
            ),
        }
        for name in ("afer", "bogus")
    ]
    assert stranger.status_code == 401  # a stranger learns no parameter names


async def test_sse_takes_what_eventsource_polyfills_add(table_id: str) -> None:
    """A polyfill's reconnect adds ?lastEventId= (and a cache-buster ?_=): refused 422, the
    stream ended for good at its first reconnect, an EventSource giving up on any answer but
    a 200 stream (a review of the parameters' refusal, 2026-12-07)."""
    fanout = Fanout(bus=None)
    await fanout.emit(table_id, Channel.ROUND_STATE, state(table_id, "betting"))  # 1
    for seq in range(1, 4):  # 2, 3, 4
        await fanout.emit(table_id, Channel.ROUND_EVENTS, event(table_id, seq))
    ctx = WebContext(fanout=fanout, extras={"platform_token": TOKEN})
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"/api/tables/{table_id}/events"
        async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
            query = {"lastEventId": f"{fanout.run}-2", "_": "1733600000000"}
            async with http.stream("GET", url, params=query) as resumed:
                assert resumed.status_code == 200
                got = await take(resumed, 2)
    assert [(ident, data["data"]["seq"]) for ident, _, data in got] == [
        (f"{fanout.run}-3", 2),
        (f"{fanout.run}-4", 3),
    ]
