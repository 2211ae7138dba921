"""A REST read refuses a query parameter it does not take: 422 naming it and those it takes.

A review (a game-server developer): `/api/tables/clubhouse/rounds?foo=1`, `?table=` on
that path, `/api/rounds?foo=1`, `/api/alerts?foo=1` and `/api/stats?x=2` all answered 200,
so a misspelt catch-up filter silently returned the newest 100 rounds, unfiltered. The
streams keep their own query parameters (`?token=`, `?after=`: tests/streams).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from http_support import platform_api

from studio.store import Database

ROUNDS = "since, until, player, alert, limit"


@pytest.fixture
async def http(database: Database) -> AsyncIterator[httpx.AsyncClient]:
    async with platform_api(database) as (client, controller):
        await controller.rounds.upsert("bj1-R1", "bj1", started="2026-12-01T10:00:00+00:00")
        yield client


@pytest.mark.parametrize(
    ("url", "unknown", "takes"),
    [
        ("/api/tables/bj1/rounds?foo=1", ["foo"], ROUNDS),
        ("/api/tables/bj1/rounds?table=classic6", ["table"], ROUNDS),
        ("/api/tables/bj1/rounds?sinse=2026-12-01T00:00:00Z&limit=5", ["sinse"], ROUNDS),
        ("/api/rounds?foo=1&bar=2&foo=3", ["foo", "bar"], f"table, {ROUNDS}"),
        ("/api/alerts?foo=1", ["foo"], "state, table, limit"),
        ("/api/stats?x=2", ["x"], "hours"),
        ("/api/tables?x=1", ["x"], "none"),
        ("/api/tables/bj1?x=1", ["x"], "none"),
        ("/api/rounds/bj1-R1?x=1", ["x"], "none"),
        ("/api/audit/chain?x=1", ["x"], "none"),
        ("/api/tables?token=s3cret-token", ["token"], "none"),  # REST reads: a bearer header
    ],
)
async def test_an_unknown_query_parameter_is_a_422(
    http: httpx.AsyncClient, url: str, unknown: list[str], takes: str
) -> None:
    answer = await http.get(url)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert [error["loc"] for error in detail] == [["query", name] for name in unknown]
    for error, name in zip(detail, unknown, strict=True):
        assert error["type"] == "extra_forbidden"
        assert error["msg"] == f"unknown query parameter {name!r}: this endpoint takes {takes}"


@pytest.mark.parametrize(
    "url",
    [
        "/api/tables/bj1/rounds?since=2026-12-01T00:00:00Z&until=2026-12-01T10:00:00Z"
        "&player=p1&alert=x&limit=5",
        "/api/rounds?table=bj1&since=2026-12-01T00:00:00Z&limit=5",
        "/api/alerts?state=open&table=bj1&limit=5",
        "/api/stats?hours=2",
        "/api/tables",
        "/api/tables/bj1",
        "/api/rounds/bj1-R1",
    ],
)
async def test_the_known_ones_still_answer(http: httpx.AsyncClient, url: str) -> None:
    assert (await http.get(url)).status_code == 200, url


async def test_a_stranger_learns_no_parameter_names(http: httpx.AsyncClient) -> None:
    for url in ("/api/rounds?foo=1", "/api/tables?x=1", "/api/stats?x=2"):
        answer = await http.get(url, headers={"Authorization": "Bearer wrong"})
        assert answer.status_code == 401, url
        assert "since" not in answer.text and "foo" not in answer.text


async def test_until_is_described_as_inclusive(http: httpx.AsyncClient) -> None:
    """The index keeps a round started at `until` (`started <= until`); it said "before"."""
    described = (await http.get("/openapi.json")).json()["paths"]
    for path in ("/api/rounds", "/api/tables/{table}/rounds"):
        params = {p["name"]: p for p in described[path]["get"]["parameters"]}
        assert params["until"]["description"] == "rounds started at or before", path
    # and the code does keep it
    kept = await http.get("/api/rounds?until=2026-12-01T10:00:00Z")
    assert [r["round_id"] for r in kept.json()] == ["bj1-R1"]
