"""A console form sent after its session ended goes to the login form (real app and database).

Before, only a GET was sent there; a form (pause a table, resolve an alert) answered the
raw JSON 401 ``{"detail": "login required"}`` and the reason typed into it was lost
without a word.
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
from console_double import InMemoryController
from console_helpers import PASSWORD, form_token, login
from fastapi import FastAPI

from studio.console.auth import SessionStore
from studio.console.users import utc_now

HTML = {"accept": "text/html,application/xhtml+xml"}


def _expire_sessions(app: FastAPI) -> None:
    sessions: SessionStore = app.state.console_auth.sessions
    real_clock = sessions.clock
    sessions.clock = lambda: real_clock() + timedelta(hours=13)


async def test_a_form_sent_after_the_session_ended_goes_to_the_login_form(
    app: FastAPI, client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    token = await login(client, "manager")
    _expire_sessions(app)
    response = await client.post(
        "/console/tables/bj1/pause",
        data={"reason": "long break", "csrf_token": token},
        headers={**HTML, "referer": "http://testserver/console/tables/bj1?notice=paused"},
    )
    assert response.status_code == 303, response.text
    location = urlsplit(response.headers["location"])
    assert location.path == "/console/login"
    query = parse_qs(location.query)
    assert query["next"] == ["/console/tables/bj1"]  # the form's page, without its old notice
    assert "session ended" in query["error"][0] and "again" in query["error"][0]
    assert not controller.calls
    page = await client.get(response.headers["location"], headers=HTML)
    assert page.status_code == 200 and "session ended" in page.text
    assert 'name="next" value="/console/tables/bj1"' in page.text
    # Logging in there returns to the form's page.
    app.state.console_auth.sessions.clock = utc_now
    back = await client.post(
        "/console/login",
        data={
            "username": "manager",
            "password": PASSWORD,
            "next": "/console/tables/bj1",
            "csrf_token": form_token(page.text),
        },
        headers=HTML,
    )
    assert back.status_code == 303 and back.headers["location"] == "/console/tables/bj1"


async def test_next_is_only_a_console_page_of_this_site(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    token = await login(client, "manager")
    _expire_sessions(app)
    for referer in (
        "https://evil.example/console/tables/bj1",
        "http://testserver/api/tables",
        "http://testserver//evil.example/console",
        "",
    ):
        response = await client.post(
            "/console/tables/bj1/pause",
            data={"reason": "long break", "csrf_token": token},
            headers={**HTML, "referer": referer},
        )
        assert response.status_code == 303, referer
        query = parse_qs(urlsplit(response.headers["location"]).query)
        assert "next" not in query, referer
        assert "session ended" in query["error"][0]


async def test_another_sites_form_keeps_the_401(client: httpx.AsyncClient) -> None:
    # No cookies: another site's form (SameSite=Strict), or a browser whose cookie expired.
    forged = await client.post(
        "/console/tables/bj1/pause",
        data={"reason": "forged"},
        headers={**HTML, "origin": "http://evil.example"},
    )
    assert forged.status_code == 401 and forged.json() == {"detail": "login required"}
    own = await client.post(
        "/console/tables/bj1/pause",
        data={"reason": "long break"},
        headers={**HTML, "origin": "http://testserver"},
    )
    assert own.status_code == 303 and own.headers["location"].startswith("/console/login?")


async def test_scripts_and_the_rest_api_keep_the_401(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    token = await login(client, "manager")
    _expire_sessions(app)
    script = await client.post(
        "/console/tables/bj1/pause",
        data={"reason": "long break", "csrf_token": token},
        headers={"accept": "application/json"},
    )
    assert script.status_code == 401 and script.json() == {"detail": "login required"}
    api = await client.post(
        "/api/tables/bj1/pause",
        json={"reason": "long break"},
        headers={**HTML, "x-csrf-token": token},
    )
    assert api.status_code == 401
