"""Round search is paged and its exports are complete, however many rounds match.

A review: the round list and both exports were cut at 500 rounds without a word, while a
busy table passes 500 rounds a day, so a dispute's or an audit's export came out
incomplete. The list now shows 100 rounds a page with "Showing rounds 1–100 of more than
100" and a next page; the exports hold every round that matches the filters, read 500 at
a time. Rounds sharing a start time across a page's end are neither lost nor repeated.

The real round index (``RoundIndex.search``, SQLite and PostgreSQL) behind the console,
the controller TEST DOUBLE (console_double.py) for the rest.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from html import unescape

import httpx
from console_double import InMemoryController
from console_helpers import login

from studio.store import Database
from studio.store.rounds import RoundIndex, rounds

START = datetime(2026, 12, 1, tzinfo=UTC)
TIED = 7  # rounds started at one instant, across the first page's end


async def _index(database: Database, controller: InMemoryController) -> list[str]:
    """1,234 rounds of bj1 and 30 of bj2 in the real index; the console reads it. Returns
    bj1's round ids, the latest first."""
    rows = []
    for n in range(1234):
        # Rounds 95 to 101 (counted from the latest) start at the same instant.
        at = START + timedelta(seconds=1234 - (100 if 94 <= n <= 100 else n))
        rows.append({"round_id": f"bj1-R{n + 1}", "table_id": "bj1", "started": at.isoformat()})
    rows += [
        {
            "round_id": f"bj2-R{n + 1}",
            "table_id": "bj2",
            "started": (START + timedelta(seconds=n)).isoformat(),
        }
        for n in range(30)
    ]
    async with database.engine.begin() as conn:
        await conn.execute(
            rounds.insert(),
            [{"status": "settled", "players": '["p-1"]', "alerts": "[]", **row} for row in rows],
        )
    controller.rounds = RoundIndex(database).search  # type: ignore[method-assign]
    ordered = sorted(
        (r for r in rows if r["table_id"] == "bj1"), key=lambda r: r["started"], reverse=True
    )
    return [r["round_id"] for r in ordered]


def _listed(page: str) -> list[str]:
    body = page.split('id="round-list"')[1].split("</table>")[0]
    return re.findall(r'<a href="/console/rounds/[^"]+">([^<]+)</a>', body)


async def test_the_round_list_pages_through_every_round(
    client: httpx.AsyncClient, controller: InMemoryController, database: Database
) -> None:
    expected = await _index(database, controller)
    await login(client, "viewer")
    url = "/console/rounds?table=bj1"
    page = (await client.get(url)).text
    # Before: 500 rounds and nothing said more matched.
    assert len(_listed(page)) == 100
    assert "Showing rounds 1–100 of more than 100." in page
    seen: list[str] = []
    pages = 0
    while True:
        listed = _listed(page)
        assert listed, page
        seen += listed
        pages += 1
        found = re.search(r'href="(/console/rounds\?[^"]+)" id="next-page"', page)
        if found is None:
            break
        url = unescape(found.group(1))
        assert "table=bj1" in url
        page = (await client.get(url)).text
        assert 'id="first-page"' in page
    assert pages == 13
    assert f"Showing rounds 1201–{len(expected)} (the last)." in page
    # Every round once, in the list's order, the rounds sharing a start time included.
    assert len(seen) == len(set(seen)) == len(expected)
    assert set(seen) == set(expected)
    starts = {r: i for i, r in enumerate(expected)}
    assert [starts[r] for r in seen][:94] == list(range(94))


async def test_a_short_list_says_it_is_all(
    client: httpx.AsyncClient, controller: InMemoryController, database: Database
) -> None:
    await _index(database, controller)
    await login(client, "viewer")
    page = (await client.get("/console/rounds?table=bj2")).text
    assert len(_listed(page)) == 30
    assert "Showing rounds 1–30 (all that match)." in page and 'id="next-page"' not in page


async def test_the_exports_hold_every_round_that_matches(
    client: httpx.AsyncClient, controller: InMemoryController, database: Database
) -> None:
    expected = await _index(database, controller)
    await login(client, "manager")
    exported = await client.get("/console/rounds/export.csv?table=bj1")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    assert exported.headers["content-disposition"].startswith('attachment; filename="rounds-')
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    # Before: the first 500 of 1,234, without a word.
    assert [r["round_id"] for r in rows].count("bj1-R1") == 1
    assert len(rows) == len({r["round_id"] for r in rows}) == len(expected)
    assert {r["round_id"] for r in rows} == set(expected)
    assert all(r["table"] == "bj1" and r["players"] == "p-1" for r in rows)

    as_json = await client.get("/console/rounds/export.json")
    every = json.loads(as_json.text)
    assert len(every) == len({r["round_id"] for r in every}) == len(expected) + 30
    assert as_json.text.startswith('[\n  {\n    "round_id"')

    none = await client.get("/console/rounds/export.json?table=bj3")
    assert json.loads(none.text) == []
    bad = await client.get("/console/rounds/export.csv?since=yesterday")
    assert bad.status_code == 400
