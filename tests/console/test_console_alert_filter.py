"""``/console/alerts?table=T`` filters both lists, and acting on an alert keeps the filter.

Before, the Resolved list showed every table's alerts whatever the filter, and an
acknowledgement or a resolution redirected to ``/console/alerts``, dropping it. The
filter the redirect keeps is a known table id only: anything else returns to the
unfiltered list and never leaves the console (controller: the in-memory TEST DOUBLE).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
from console_double import InMemoryController
from console_helpers import login


def resolved_ids(page: str) -> list[str]:
    history = page.split('aria-label="resolved alerts"')[1]
    return re.findall(r'id="resolved-([^"]+)"', history)


async def alerts(controller: InMemoryController) -> dict[str, str]:
    now = datetime.now(UTC)
    ids = {
        name: controller.add_alert(table, "heartbeat_late", "warning", now)
        for name, table in (("bj1-old", "bj1"), ("bj2-old", "bj2"), ("bj1", "bj1"))
    }
    for name in ("bj1-old", "bj2-old"):
        await controller.resolve_alert(ids[name], "accept", user="manager", reason="checked it")
    return ids


async def test_the_filter_applies_to_the_resolved_list_too(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    ids = await alerts(controller)
    await login(client, "viewer")
    everything = (await client.get("/console/alerts")).text
    assert sorted(resolved_ids(everything)) == sorted([ids["bj1-old"], ids["bj2-old"]])
    for url in ("/console/alerts?table=bj1", "/console/fragments/alerts?table=bj1"):
        page = (await client.get(url)).text
        assert resolved_ids(page) == [ids["bj1-old"]], url
        assert re.findall(r'data-alert-id="([^"]+)"', page.split("resolved alerts")[0]) == [
            ids["bj1"]
        ]
    page = (await client.get("/console/alerts?table=bj2")).text
    assert resolved_ids(page) == [ids["bj2-old"]]


def location(answer: httpx.Response) -> tuple[str, dict[str, list[str]]]:
    assert answer.status_code == 303, answer.text
    parts = urlsplit(answer.headers["location"])
    assert not parts.scheme and not parts.netloc  # never off the console
    return parts.path, parse_qs(parts.query)


async def test_acting_on_an_alert_returns_to_the_filtered_list(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    ids = await alerts(controller)
    token = await login(client, "manager")
    page = (await client.get("/console/alerts?table=bj1")).text
    # The page's forms carry the filter.
    card = page.split(f'data-alert-id="{ids["bj1"]}"')[1].split("</article>")[0]
    assert card.count('<input type="hidden" name="table" value="bj1">') == 2
    acknowledged = await client.post(
        f"/console/alerts/{ids['bj1']}/acknowledge", data={"csrf_token": token, "table": "bj1"}
    )
    path, query = location(acknowledged)
    assert path == "/console/alerts" and query["table"] == ["bj1"] and "notice" in query
    # A refusal (reason too short) keeps it too, with the error instead of a notice.
    form = {"csrf_token": token, "table": "bj1", "action": "accept"}
    refused = await client.post(
        f"/console/alerts/{ids['bj1']}/resolve", data={**form, "reason": "x"}
    )
    path, query = location(refused)
    assert path == "/console/alerts" and query["table"] == ["bj1"] and "error" in query
    resolved = await client.post(
        f"/console/alerts/{ids['bj1']}/resolve", data={**form, "reason": "camera wiped"}
    )
    path, query = location(resolved)
    assert path == "/console/alerts" and query["table"] == ["bj1"] and "notice" in query
    assert controller.alerts(table="bj1", state="resolved")[-1]["alert_id"] == ids["bj1"]


async def test_only_a_known_table_is_kept_in_the_redirect(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    ids = await alerts(controller)
    token = await login(client, "manager")
    for table in ("nope", "//evil.test", "https://evil.test/x", "bj1&notice=forged", "bj1?x"):
        answer = await client.post(
            f"/console/alerts/{ids['bj1']}/acknowledge", data={"csrf_token": token, "table": table}
        )
        path, query = location(answer)
        assert path == "/console/alerts" and "table" not in query, table
        assert query["notice"] == [f"alert {ids['bj1']} acknowledged"], table
