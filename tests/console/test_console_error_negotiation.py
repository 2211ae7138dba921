"""The console's error answers, HTML page or JSON, by one rule (a review, 2026-12-06).
``curl -b jar .../console/rounds/nope-R9/export.json`` was answered an HTML 404; an Accept
of ``application/problem+json`` got HTML too (only exactly ``application/json`` got JSON);
and the 403 handler kept the old rule, answering the same client JSON. And the alerts of a
table no longer configured became a 404, hiding the resolved alerts still held of it."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import login

SQLITE = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


def is_json(answer: httpx.Response) -> bool:
    return answer.headers["content-type"].startswith("application/json")


def is_html(answer: httpx.Response) -> bool:
    return answer.headers["content-type"].startswith("text/html")


@SQLITE
async def test_a_json_or_export_url_is_answered_json_unless_html_is_preferred(
    client: httpx.AsyncClient,
) -> None:
    await login(client, "manager")
    client.headers.pop("accept", None)
    for accept in ("*/*", None, "application/problem+json"):
        headers = {"accept": accept} if accept else {}
        for path in ("/console/rounds/nope-R9/export.json", "/console/rounds/nope-R9/export.csv"):
            answer = await client.get(path, headers=headers)
            assert answer.status_code == 404, (path, accept)
            assert is_json(answer), (path, accept, answer.headers["content-type"])
            assert answer.json()["detail"] == "no round 'nope-R9'"
    # A browser following the link prefers HTML: the error page.
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    page = await client.get("/console/rounds/nope-R9/export.json", headers={"accept": browser})
    assert page.status_code == 404 and is_html(page) and "<h1>Not found</h1>" in page.text


@SQLITE
async def test_any_json_media_type_gets_json_weighed_by_q(client: httpx.AsyncClient) -> None:
    await login(client, "viewer")
    for accept, json_wanted in (
        ("application/problem+json", True),
        ("application/vnd.api+json, */*;q=0.1", True),
        ("text/html;q=0.2, application/json", True),
        ("application/json;q=0.5, text/html", False),
        ("text/html, application/json", False),  # a tie: the page's kind, HTML
        ("application/json;q=0", False),
        ("*/*", False),
    ):
        answer = await client.get("/console/tables/nope", headers={"accept": accept})
        assert answer.status_code == 404, accept
        assert is_json(answer) == json_wanted and is_html(answer) != json_wanted, accept


@SQLITE
async def test_a_403_follows_the_same_rule_as_a_404(client: httpx.AsyncClient) -> None:
    await login(client, "viewer")
    for accept in ("*/*", "text/html"):
        missing = await client.get("/console/tables/nope", headers={"accept": accept})
        refused = await client.get("/console/users", headers={"accept": accept})
        assert (missing.status_code, refused.status_code) == (404, 403)
        assert is_html(missing) and is_html(refused), accept
        assert "<h1>Not allowed</h1>" in refused.text
    refused = await client.get("/console/users", headers={"accept": "application/problem+json"})
    assert refused.status_code == 403 and is_json(refused) and "admin" in refused.json()["detail"]
    export = await client.get("/console/rounds/export.csv", headers={"accept": "*/*"})
    assert export.status_code == 403 and is_json(export)


def test_accept_quality() -> None:
    from studio.console.pages import _accept_quality

    assert _accept_quality("") == (0.0, 0.0)
    assert _accept_quality("application/json;q=0.4;charset=utf-8, text/html;q=bad") == (0.4, 0.0)
    assert _accept_quality("APPLICATION/PROBLEM+JSON; q=0.7 , Text/HTML;q=0.9") == (0.7, 0.9)


@SQLITE
async def test_alerts_of_a_table_no_longer_configured_are_shown(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = controller.add_alert(
        "bj9", "card_mismatch", "warning", datetime.now(UTC), state="resolved"
    )
    await login(client, "viewer")
    for path in ("/console/alerts?table=bj9", "/console/fragments/alerts?table=bj9"):
        page = await client.get(path, headers={"accept": "text/html"})
        assert page.status_code == 200, (path, page.text)
        assert f'id="resolved-{alert_id}"' in page.text
    never = await client.get("/console/alerts?table=zzz", headers={"accept": "text/html"})
    assert never.status_code == 404 and "no table &#39;zzz&#39;" in never.text
