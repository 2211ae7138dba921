"""A REST read refuses a query parameter given twice, or given empty: 422 naming it.

A consumer's review (a game server written from the docs): `since=A&since=B` and
`limit=1&limit=2` answered 200 with the last one's rounds, and an empty `player=` or
`alert=` (`?table=` on /api/rounds too) with every round, unfiltered, where the docs
promise a 422 for a parameter the endpoint does not take as given. A platform's
query-building bug got a wrong or unfiltered round list it could not tell from the one it
asked for. The streams refuse a repeated `after` or `token` the same way (tests/streams).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from http_support import platform_api

from studio.store import Database

A, B = "2026-12-01T09:00:00Z", "2026-12-01T11:00:00Z"


@pytest.fixture
async def http(database: Database) -> AsyncIterator[httpx.AsyncClient]:
    async with platform_api(database) as (client, controller):
        for n in (1, 2):
            await controller.rounds.upsert(
                f"bj1-R{n}", "bj1", started=f"2026-12-01T10:0{n}:00.000Z", players=[f"p{n}"]
            )
        yield client


@pytest.mark.parametrize(
    ("url", "repeated"),
    [
        (f"/api/tables/bj1/rounds?since={A}&since={B}", ["since"]),
        (f"/api/tables/bj1/rounds?until={B}&until={A}", ["until"]),
        ("/api/tables/bj1/rounds?limit=1&limit=2", ["limit"]),
        ("/api/tables/bj1/rounds?player=p1&player=p2&limit=1&limit=1", ["player", "limit"]),
        ("/api/rounds?table=bj1&table=bj2", ["table"]),
        ("/api/rounds?alert=x&alert=x", ["alert"]),  # the same value twice too
        ("/api/alerts?state=open&state=resolved", ["state"]),
        ("/api/stats?hours=1&hours=2", ["hours"]),
    ],
)
async def test_a_query_parameter_given_twice_is_a_422(
    http: httpx.AsyncClient, url: str, repeated: list[str]
) -> None:
    answer = await http.get(url)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert [error["loc"] for error in detail] == [["query", name] for name in repeated]
    for error, name in zip(detail, repeated, strict=True):
        assert error["type"] == "repeated", error
        assert error["msg"].startswith(f"query parameter {name!r} given 2 times: give it once")


@pytest.mark.parametrize(
    ("url", "empty"),
    [
        ("/api/tables/bj1/rounds?player=", "player"),
        ("/api/tables/bj1/rounds?alert=&limit=3", "alert"),
        ("/api/rounds?player=", "player"),
        ("/api/rounds?table=", "table"),
        ("/api/alerts?table=", "table"),
    ],
)
async def test_an_empty_filter_is_a_422_not_every_round(
    http: httpx.AsyncClient, url: str, empty: str
) -> None:
    answer = await http.get(url)
    assert answer.status_code == 422, answer.text
    [error] = answer.json()["detail"]
    assert error["loc"] == ["query", empty]
    assert error["type"] == "empty", error
    assert error["msg"].startswith(f"query parameter {empty!r} is empty")


async def test_a_filter_given_once_still_filters(http: httpx.AsyncClient) -> None:
    found = await http.get("/api/tables/bj1/rounds?player=p1")
    assert [r["round_id"] for r in found.json()] == ["bj1-R1"]
    found = await http.get(f"/api/rounds?table=bj1&since={A}&until={B}&limit=1")
    assert [r["round_id"] for r in found.json()] == ["bj1-R2"]
