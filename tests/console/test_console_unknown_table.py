"""A table the console does not have. ``GET /console/tables/nope`` from curl (``Accept:
*/*``) was answered FastAPI's raw JSON, and ``/console/alerts?table=zzz`` showed
"Alerts · zzz / No open alerts" as if the table had none."""

from __future__ import annotations

import httpx
from console_helpers import login


async def test_a_missing_table_is_the_html_error_page_unless_json_is_asked_for(
    client: httpx.AsyncClient,
) -> None:
    await login(client, "viewer")
    for accept in ("*/*", None):
        headers = {"accept": accept} if accept else {}
        client.headers.pop("accept", None)
        page = await client.get("/console/tables/nope", headers=headers)
        assert page.status_code == 404, accept
        assert page.headers["content-type"].startswith("text/html"), accept
        assert "<h1>Not found</h1>" in page.text and "no table &#39;nope&#39;" in page.text
    api = await client.get("/console/tables/nope", headers={"accept": "application/json"})
    assert api.status_code == 404 and api.json()["detail"] == "no table 'nope'"


async def test_alerts_of_an_unknown_table_say_so_and_name_the_tables(
    client: httpx.AsyncClient,
) -> None:
    await login(client, "viewer")
    for path in ("/console/alerts?table=zzz", "/console/fragments/alerts?table=zzz"):
        page = await client.get(path, headers={"accept": "text/html"})
        assert page.status_code == 404, path
        assert "no table &#39;zzz&#39;; the tables are bj1, bj2" in page.text, page.text
        assert "No open alerts" not in page.text
    known = await client.get("/console/alerts?table=bj1", headers={"accept": "text/html"})
    assert known.status_code == 200
    everything = await client.get("/console/alerts?table=", headers={"accept": "text/html"})
    assert everything.status_code == 200
