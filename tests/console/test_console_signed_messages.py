"""A page's message box shows only messages the console itself sent (real app and database).

A review: ``?notice=`` and ``?error=`` were shown verbatim (escaped) in the page's message
box, so a link from anyone ("/console/?error=the console has moved to http://...") put
their words in the console's own box. Now a redirect's message carries a signature keyed by
the session's CSRF token (``msig``), and a message without the right one is not shown; the
login page's fixed messages (a session that ended, a stale login form) are ours as they are.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from console_double import InMemoryController
from console_helpers import login
from fastapi import FastAPI

PHISH = "the console has moved to http://evil.test: log in there"


def flash(page: str) -> str:
    """The text of the page's message box(es), or ''."""
    return "".join(part.split("</p>")[0] for part in page.split('<p class="flash')[1:])


async def test_a_forged_message_is_not_shown(client: httpx.AsyncClient) -> None:
    await login(client, "manager")
    for path in ("/console/", "/console/alerts", "/console/tables/bj1", "/console/rounds"):
        for key in ("notice", "error"):
            page = await client.get(f"{path}?{urlencode({key: PHISH, 'msig': 'x' * 32})}")
            assert page.status_code == 200
            assert "evil.test" not in page.text and flash(page.text) == "", (path, key)


async def test_an_actions_message_is_shown_only_as_sent_and_only_to_its_session(
    client: httpx.AsyncClient, app: FastAPI, controller: InMemoryController
) -> None:
    token = await login(client, "dealer")
    done = await client.post(
        "/console/tables/bj1/pause", data={"reason": "dealer break", "csrf_token": token}
    )
    assert done.status_code == 303
    location = done.headers["location"]
    query = parse_qs(urlsplit(location).query)
    assert query["notice"] == ["bj1: paused"] and len(query["msig"][0]) == 32
    assert "bj1: paused" in flash((await client.get(location)).text)
    # Its signature does not carry other words, nor the same words as an error.
    for changed in ({"notice": PHISH}, {"error": "bj1: paused"}):
        forged = {"msig": query["msig"][0], **changed}
        page = (await client.get(f"/console/tables/bj1?{urlencode(forged)}")).text
        assert flash(page) == "", changed
    # An error's message is signed as well.
    refused = await client.post("/console/tables/bj1/pause", data={"csrf_token": token})
    shown = flash((await client.get(refused.headers["location"])).text)
    assert "a reason is required" in shown
    # Another session (the link sent to someone else) shows nothing.
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as other:
        await login(other, "dealer")
        assert flash((await other.get(location)).text) == ""


async def test_the_login_pages_fixed_messages_still_show(client: httpx.AsyncClient) -> None:
    for text in (
        "your session ended: log in and submit the form again",
        "the login form had expired: log in again",
    ):
        page = await client.get(f"/console/login?{urlencode({'error': text})}")
        assert text in flash(page.text)
    page = await client.get(f"/console/login?{urlencode({'error': PHISH})}")
    assert "evil.test" not in page.text
