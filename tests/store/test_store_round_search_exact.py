"""A round search by player or alert code matches that id exactly: ``_`` and ``%`` are not
wildcards, and no id matches across two list entries (REST, console and exports search
through :meth:`RoundIndex.search`). Until 2026-12-05 the filter was ``LIKE '%"id"%'``:
``player=clubhouse_s5_p1`` found the rounds of ``clubhouse-s5-p1``, ``player=%`` every one.

Real database, SQLite and PostgreSQL; no test double.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from http_support import PASSWORD, PLATFORM, app_client

import studio.console  # registers the users/sessions tables before create_all
from studio.store import Database
from studio.store.rounds import RoundIndex, rounds

assert studio.console.install is not None

ODD = ["a\\b", "c%d", "e_f", 'g"h', ", ", "é", "\\", "it's", "[x]"]
ROUNDS = {
    "t1-R1": {"players": ["clubhouse-s5-p1", "p2"], "alerts": ["misscan", "misscan"]},
    "t1-R2": {"players": sorted(ODD), "alerts": ["mis_can"]},
    # Two players whose ids, side by side in the index's JSON, hold '", "' and ', "x'.
    "t1-R3": {"players": ["a, ", ", b", "x\\"], "alerts": ["%"]},
    "t1-R4": {"players": [], "alerts": []},
}
# What each search finds, as round ids (latest first).
EXPECTED = {
    **{player: ["t1-R2"] for player in ODD},
    "clubhouse-s5-p1": ["t1-R1"],
    "clubhouse_s5_p1": [],
    "clubhouse%": [],
    "%": [],
    "_": [],
    "%%": [],
    "p": [],
    "p2": ["t1-R1"],
    "a": [],
    "a, ": ["t1-R3"],
    "x": [],
    "x\\": ["t1-R3"],
    "\\\\": [],
    "": [],  # no filter: every round
}
ALERTS = {"misscan": ["t1-R1"], "mis_can": ["t1-R2"], "mis%": [], "%": ["t1-R3"], "_": []}


async def _indexed(database: Database) -> RoundIndex:
    index = RoundIndex(database)
    for n, (round_id, fields) in enumerate(ROUNDS.items()):
        await index.upsert(round_id, "t1", started=f"2026-12-05T10:0{n}:00Z", **fields)
    return index


async def test_a_player_search_matches_the_id_exactly(database: Database) -> None:
    index = await _indexed(database)
    for player, expected in EXPECTED.items():
        found = [r["round_id"] for r in await index.search(player=player or None)]
        if not player:
            expected = ["t1-R4", "t1-R3", "t1-R2", "t1-R1"]
        assert found == expected, player


async def test_an_alert_search_matches_the_code_exactly(database: Database) -> None:
    index = await _indexed(database)
    for code, expected in ALERTS.items():
        found = [r["round_id"] for r in await index.search(alert_code=code)]
        assert found == expected, code
    both = await index.search(player="p2", alert_code="misscan")
    assert [r["round_id"] for r in both] == ["t1-R1"]


async def test_a_row_whose_list_is_not_json_is_not_matched_and_fails_nothing(
    database: Database,
) -> None:
    index = await _indexed(database)
    await index.upsert("t1-R5", "t1", started="2026-12-05T10:09:00Z")
    async with database.engine.begin() as conn:
        await conn.execute(
            rounds.update().where(rounds.c.round_id == "t1-R5").values(players='["p2", ')
        )
    found = await index.search(player="p2")
    assert [r["round_id"] for r in found] == ["t1-R1"]


@pytest.fixture
async def http(database: Database) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(database, "t1") as client:
        yield client


async def test_rest_and_console_exports_search_players_exactly(
    database: Database, http: httpx.AsyncClient
) -> None:
    await _indexed(database)

    async def rest(query: dict[str, str]) -> list[str]:
        answer = await http.get("/api/rounds", params=query, headers=PLATFORM)
        assert answer.status_code == 200, answer.text
        return [r["round_id"] for r in answer.json()]

    assert await rest({"player": "clubhouse_s5_p1"}) == []
    assert await rest({"player": "%"}) == []
    assert await rest({"player": "clubhouse-s5-p1"}) == ["t1-R1"]
    assert await rest({"player": 'g"h'}) == ["t1-R2"]
    assert await rest({"alert": "mis_can"}) == ["t1-R2"]
    page = await http.get("/console/login")
    match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert match
    form = {"username": "boss", "password": PASSWORD, "csrf_token": match.group(1)}
    assert (await http.post("/console/login", data=form)).status_code == 303
    for player, expected in (("%", []), ("clubhouse_s5_p1", []), ("e_f", ["t1-R2"])):
        answer = await http.get("/console/rounds/export.json", params={"player": player})
        assert answer.status_code == 200, answer.text
        assert [r["round_id"] for r in answer.json()] == expected, player
