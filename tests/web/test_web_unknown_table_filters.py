"""An unknown table named in `?table=` is a 404, as in the path: /api/rounds and
/api/alerts answered `?table=nope` with 200 and an empty list (a review)."""

from __future__ import annotations

from http_support import platform_api

from studio.store import Database


async def test_an_unknown_table_in_the_query_is_a_404(database: Database) -> None:
    async with platform_api(database) as (http, _):
        path = await http.get("/api/tables/nope/rounds")
        assert path.status_code == 404
        for url in ("/api/rounds?table=nope", "/api/alerts?table=nope"):
            answer = await http.get(url)
            assert (answer.status_code, answer.json()) == (404, path.json()), url
        for url in ("/api/rounds?table=bj1", "/api/alerts?table=bj1", "/api/rounds"):
            assert (await http.get(url)).status_code == 200, url


async def test_a_table_taken_out_of_the_configuration_still_lists_its_rounds(
    database: Database,
) -> None:
    """Its rounds are in the index: an auditor lists them by `?table=` or its path (a
    review: the 404 for unknown tables hid a decommissioned table's rounds)."""
    async with platform_api(database) as (http, controller):
        await controller.rounds.upsert("old-R1", "old", started="2026-12-01T10:00:00+00:00")
        for url in ("/api/rounds?table=old", "/api/tables/old/rounds"):
            answer = await http.get(url)
            assert answer.status_code == 200, url
            assert [r["round_id"] for r in answer.json()] == ["old-R1"], url
        assert (await http.get("/api/alerts?table=old")).status_code == 404  # none kept
