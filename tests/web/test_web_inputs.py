"""What a stranger or a careless client can send the web server: each gets a 4xx that says
what is wrong, never a 500, and nothing big is read before it is refused.

Real controller service and database (SQLite and PostgreSQL); no test double.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from http_support import PASSWORD, PLATFORM, app_client

import studio.console  # registers the users/sessions tables before create_all
from studio.store import Database
from studio.web.app import MAX_BODY_BYTES

assert studio.console.install is not None


@pytest.fixture
async def http(database: Database) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(database, "bj1") as client:
        yield client


async def login(http: httpx.AsyncClient, username: str = "boss") -> httpx.Response:
    page = await http.get("/console/login")
    match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert match
    form = {"username": username, "password": PASSWORD, "csrf_token": match.group(1)}
    return await http.post("/console/login", data=form)


async def test_a_big_body_is_refused_before_it_is_read(http: httpx.AsyncClient) -> None:
    # Before: FastAPI read (and JSON-decoded) the whole body before the token check said
    # 401; a stranger's 200 MB body took the server's peak memory from 89 to 736 MB.
    big = b'{"id": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
    sent = await http.post("/api/tables/bj1/bets", content=big)
    assert sent.status_code == 413, sent.text
    read = 0

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as read
        nonlocal read
        for _ in range(64):
            read += 64 * 1024
            yield b" " * (64 * 1024)

    streamed = await http.post(
        "/api/tables/bj1/bets", content=chunked(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert read < 64 * 64 * 1024  # stopped reading past the limit
    # The login form too (anyone can send it, with a CSRF cookie of their own).
    page = await http.get("/console/login")
    form = await http.post(
        "/console/login",
        content=b"username=x&password=" + b"y" * (MAX_BODY_BYTES + 1),
        headers={
            "content-type": "application/x-www-form-urlencoded",
            "x-csrf-token": http.cookies["studio_csrf"],
        },
    )
    assert page.status_code == 200 and form.status_code == 413
    # An ordinary command is not affected.
    bet = {"id": "b1", "player": "p1", "seat": 1, "stake": "10"}
    assert (await http.post("/api/tables/bj1/bets", json=bet, headers=PLATFORM)).status_code in (
        200,
        409,
    )


@pytest.mark.parametrize("hours", [0, -1, 100_000_000, -100_000_000])
async def test_stats_hours_out_of_range_is_422(http: httpx.AsyncClient, hours: int) -> None:
    # Before: 1e8 hours overflowed the date (OverflowError): a 500.
    answer = await http.get(f"/api/stats?hours={hours}", headers=PLATFORM)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["query", "hours"]
    assert (await http.get("/api/stats?hours=48", headers=PLATFORM)).status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/api/rounds?table=%00",
        "/api/rounds/bj1-R%00",
        "/api/tables/bj1/rounds?since=%00",
        "/api/tables/bj%001",
        "/console/rounds/bj1-R%00",
        "/console/rounds/bj1-R%00/export.json",
        "/console/rounds/export.csv?table=%00",
        "/console/rounds?player=%00",
    ],
)
async def test_a_nul_character_in_a_url_is_400(http: httpx.AsyncClient, url: str) -> None:
    # PostgreSQL refuses text with NUL in it: before, each of these was a 500 there.
    assert (await login(http)).status_code == 303
    answer = await http.get(url, headers=PLATFORM if url.startswith("/api") else {})
    assert answer.status_code == 400, answer.text
    assert "NUL" in answer.text


async def test_a_nul_character_in_a_login_name_is_a_failed_login(
    http: httpx.AsyncClient,
) -> None:
    # Before: recording the attempt failed on PostgreSQL, a 500.
    page = await http.get("/console/login")
    match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert match
    form = {"username": "bo\x00ss", "password": PASSWORD, "csrf_token": match.group(1)}
    answer = await http.post("/console/login", data=form)
    assert answer.status_code == 401
    assert "invalid username or password" in answer.text


async def test_an_unknown_table_round_or_alert_is_a_clear_404(http: httpx.AsyncClient) -> None:
    for url in ("/api/tables/bj9", "/api/tables/bj9/rounds", "/api/rounds/bj1-R9"):
        answer = await http.get(url, headers=PLATFORM)
        assert answer.status_code == 404
        # Before: the KeyError's own quotes, '"no table \'bj9\'"'.
        assert not answer.json()["detail"].startswith('"'), answer.text
    assert (await login(http)).status_code == 303
    csrf = {"X-CSRF-Token": http.cookies["studio_csrf"]}
    for url, body in (
        ("/api/alerts/bj1-A9/acknowledge", None),
        ("/api/alerts/bj1-A9/resolve", {"action": "void", "reason": "wrong card"}),
    ):
        answer = await http.post(url, json=body, headers=csrf)
        # Before: 409, as if the alert were there and the action came at the wrong time.
        assert answer.status_code == 404, answer.text
        assert answer.json()["detail"] == "no alert 'bj1-A9'"


async def test_an_alert_state_filter_that_is_no_state_is_422(http: httpx.AsyncClient) -> None:
    # Before: any text was taken and matched nothing, so a typo ("opened") said "no alerts".
    typo = await http.get("/api/alerts?state=opened", headers=PLATFORM)
    assert typo.status_code == 422, typo.text
    assert typo.json()["detail"][0]["loc"] == ["query", "state"]
    for state in ("open", "raised", "acknowledged", "resolved"):
        assert (await http.get(f"/api/alerts?state={state}", headers=PLATFORM)).status_code == 200


async def test_a_command_posted_to_another_commands_endpoint_is_refused_as_such(
    http: httpx.AsyncClient,
) -> None:
    # An integrator's walk-through: a decision posted to /bets was made a bet and refused
    # for a missing stake and an extra "action", not for being a decision.
    decision = {"id": "d1", "type": "decision", "player": "p1", "seat": 1, "action": "hit"}
    sent = await http.post("/api/tables/bj1/bets", json=decision, headers=PLATFORM)
    assert sent.status_code == 422
    assert sent.json()["detail"] == (
        "type 'decision' does not match this endpoint's 'bet': post it to /commands"
    )
    bet = {"id": "b2", "type": "bet", "player": "p1", "seat": 1, "stake": "10"}
    assert (await http.post("/api/tables/bj1/bets", json=bet, headers=PLATFORM)).status_code in (
        200,
        409,
    )  # the matching type is taken as before


@pytest.mark.parametrize(
    "query",
    [
        "since=yesterday",
        "until=2026-13-01",
        "since=2026-12-05T10:00:00",
        "limit=0",
        "limit=-1",
        # Outside the years 1-9999 once in UTC: converting them overflowed, a 500.
        "since=0001-01-01T00:00:00%2B05:00",
        "until=9999-12-31T23:59:59-05:00",
    ],
)
async def test_a_round_search_it_cannot_read_is_422(http: httpx.AsyncClient, query: str) -> None:
    # An integrator's walk-through: since=yesterday answered 200 [] (nothing matched the
    # text), limit=0 answered one round and limit=-1 a list. A time needs its zone.
    for path in ("/api/rounds", "/api/tables/bj1/rounds"):
        sent = await http.get(f"{path}?{query}", headers=PLATFORM)
        assert sent.status_code == 422, (path, query, sent.text)


async def test_a_round_search_takes_times_with_their_zone(http: httpx.AsyncClient) -> None:
    for query in ("since=2026-12-05T10:00:00Z", "until=2026-12-05T12:00:00%2B02:00", "limit=1"):
        sent = await http.get(f"/api/rounds?{query}", headers=PLATFORM)
        assert sent.status_code == 200 and isinstance(sent.json(), list), (query, sent.text)


@pytest.mark.parametrize(
    "body",
    [
        '{"id": "n1", "player": "p", "seat": 1, "stake": NaN}',
        '{"id": "n2", "player": "p", "seat": 1, "stake": 1e999999}',
        '{"id": "n3", "player": "p", "seat": 1, "stake": "10", "side_bets": {"21+3": Infinity}}',
        '{"id": "n4", "player": "\\u0000\\ud800", "seat": 1, "stake": "10", "oops": 1}',
    ],
)
async def test_a_command_whose_values_json_cannot_echo_is_422_not_500(
    http: httpx.AsyncClient, body: str
) -> None:
    # The 422 echoed each error's input: NaN, infinity or a lone surrogate in it could not
    # be written as JSON, and the answer was a 500.
    headers = {**PLATFORM, "Content-Type": "application/json"}
    sent = await http.post("/api/tables/bj1/bets", content=body, headers=headers)
    assert sent.status_code == 422, sent.text
    assert all("input" not in error for error in sent.json()["detail"])


@pytest.mark.parametrize("body", ["[NaN]", "NaN", '"\\ud800"', "[1e999]", "[Infinity]"])
@pytest.mark.parametrize("path", ["/api/tables/bj1/commands", "/api/tables/bj1/bets"])
async def test_a_body_that_is_no_object_and_json_cannot_echo_is_422_not_500(
    http: httpx.AsyncClient, body: str, path: str
) -> None:
    # FastAPI's own answer to a body that is no object (RequestValidationError) echoed it:
    # NaN, infinity or a lone surrogate could not be written back as JSON, and the answer
    # was a plain-text 500 without the API's headers, which the docs say to send again.
    headers = {**PLATFORM, "Content-Type": "application/json"}
    sent = await http.post(path, content=body, headers=headers)
    assert sent.status_code == 422, sent.text
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["cache-control"] == "no-store"
    assert sent.headers["x-content-type-options"] == "nosniff"
    (error,) = sent.json()["detail"]
    assert error == {
        "type": "dict_type",
        "loc": ["body"],
        "msg": "Input should be a valid dictionary",
    }


async def test_a_body_error_answers_where_and_what_but_not_the_body(
    http: httpx.AsyncClient,
) -> None:
    # Every other FastAPI 422 echoed the whole body in `input` (up to 1 MiB sent back).
    big = ["x" * 100_000]
    sent = await http.post("/api/tables/bj1/commands", json=big, headers=PLATFORM)
    assert sent.status_code == 422, sent.text[:300]
    assert len(sent.content) < 1_000
    assert sent.json() == {
        "detail": [
            {"type": "dict_type", "loc": ["body"], "msg": "Input should be a valid dictionary"}
        ]
    }
    # A query parameter too, and the console's manager bodies (the same handler).
    limit = await http.get("/api/rounds?limit=abc", headers=PLATFORM)
    assert limit.status_code == 422
    assert limit.json()["detail"][0]["loc"] == ["query", "limit"]
    assert all(set(e) == {"type", "loc", "msg"} for e in limit.json()["detail"])
    assert "abc" not in limit.text


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"id": "t1", "player": "p1", "seat": 1, "stake": "10"}, "union_tag_not_found"),
        ({"id": "t2", "type": "cashout", "player": "p1"}, "union_tag_invalid"),
        (
            {"id": "t3", "type": "Bet", "player": "p1", "seat": 1, "stake": "10"},
            "union_tag_invalid",
        ),
        ({"id": "t4", "type": 5, "player": "p1"}, "union_tag_invalid"),
    ],
)
async def test_a_command_without_a_known_type_is_told_the_types(
    http: httpx.AsyncClient, body: dict[str, object], error: str
) -> None:
    # A review: pydantic's own words, "Unable to extract tag using discriminator 'type'"
    # (loc []), where the same message on MQTT is answered `type: must be one of ...`.
    sent = await http.post("/api/tables/bj1/commands", json=body, headers=PLATFORM)
    assert sent.status_code == 422, sent.text
    assert sent.json() == {
        "detail": [
            {
                "type": error,
                "loc": ["type"],
                "msg": "must be one of bet, decision, vote, insurance, early_surrender",
            }
        ]
    }
