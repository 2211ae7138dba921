"""The login form's CSRF token with a session cookie in the browser (real app and database).

The login form carries the pre-login token, the ``studio_csrf`` cookie its page set. A
live session's cookie may still be in the browser: a cross-site link opened the login
form (SameSite=Strict: the browser sent no cookie, so the form showed and replaced
``studio_csrf``), or a second tab's login form after the first logged in. Before, both
were a bare 403 "CSRF token missing or invalid".
"""

from __future__ import annotations

import httpx
from console_helpers import PASSWORD, form_token, login
from fastapi import FastAPI

from studio.console.auth import SessionStore

HTML = {"accept": "text/html,application/xhtml+xml"}


def _client(app: FastAPI, **cookies: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")
    for name, value in cookies.items():
        # As the server's own Set-Cookie would have put it in the jar (one cookie a name).
        client.cookies.set(name, value, domain="testserver.local")
    return client


async def test_login_form_reached_by_a_cross_site_link_with_a_live_session(app: FastAPI) -> None:
    async with _client(app) as browser:
        await login(browser, "manager")
        old_session = browser.cookies["studio_session"]
    # The cross-site navigation: no cookies sent, so the console shows its login form and
    # sets a new studio_csrf; the browser keeps the old session cookie.
    async with _client(app) as link:
        page = await link.get("/console/login?next=/console/alerts", headers=HTML)
        new_csrf = link.cookies["studio_csrf"]
    assert page.status_code == 200 and form_token(page.text) == new_csrf
    async with _client(app, studio_session=old_session, studio_csrf=new_csrf) as browser:
        response = await browser.post(
            "/console/login",
            data={
                "username": "manager",
                "password": PASSWORD,
                "next": "/console/alerts",
                "csrf_token": form_token(page.text),
            },
            headers={**HTML, "origin": "http://testserver"},
        )
        assert response.status_code == 303, response.text
        assert response.headers["location"] == "/console/alerts"
        new_session = browser.cookies["studio_session"]
        assert new_session != old_session
        assert (await browser.get("/console/", headers=HTML)).status_code == 200
    sessions: SessionStore = app.state.console_auth.sessions
    assert await sessions.lookup(old_session) is None  # the login ended the old one


async def test_login_form_still_needs_its_token_with_a_session_cookie(app: FastAPI) -> None:
    async with _client(app) as browser:
        await login(browser, "manager")
        session = browser.cookies["studio_session"]
        for token in ("", "x" * 43):
            response = await browser.post(
                "/console/login",
                data={"username": "admin", "password": PASSWORD, "csrf_token": token},
            )
            assert response.status_code == 403 and "CSRF" in response.json()["detail"]
            assert browser.cookies["studio_session"] == session
        # A cross-site form is refused outright, token or not.
        response = await browser.post(
            "/console/login",
            data={
                "username": "admin",
                "password": PASSWORD,
                "csrf_token": browser.cookies["studio_csrf"],
            },
            headers={"origin": "https://evil.example"},
        )
        assert response.status_code == 403
        assert browser.cookies["studio_session"] == session
        me = await browser.get("/console/users", headers={"accept": "application/json"})
        assert me.status_code == 403  # still the manager, not the admin


async def test_a_second_tabs_stale_login_form_goes_back_to_the_login_page(app: FastAPI) -> None:
    async with _client(app) as browser:
        first = await browser.get("/console/login")
        second = await browser.get("/console/login")
        assert form_token(first.text) == form_token(second.text)
        tab1 = await browser.post(
            "/console/login",
            data={
                "username": "manager",
                "password": PASSWORD,
                "csrf_token": form_token(first.text),
            },
            headers=HTML,
        )
        assert tab1.status_code == 303
        session = browser.cookies["studio_session"]
        # Tab 2's form now carries a token the browser no longer has: the login page
        # again with a word, not a bare 403; nobody is logged in by it.
        tab2 = await browser.post(
            "/console/login",
            data={
                "username": "dealer",
                "password": PASSWORD,
                "next": "/console/rounds",
                "csrf_token": form_token(second.text),
            },
            headers=HTML,
        )
        assert tab2.status_code == 303, tab2.text
        location = tab2.headers["location"]
        assert location.startswith("/console/login?") and "expired" in location
        assert "next=%2Fconsole%2Frounds" in location
        assert browser.cookies["studio_session"] == session
        # The login page sends the live session on to where the form was going.
        onward = await browser.get(location, headers=HTML)
        assert onward.status_code == 303 and onward.headers["location"] == "/console/rounds"


async def test_stale_login_form_without_a_session_shows_the_form_again(app: FastAPI) -> None:
    async with _client(app) as browser:
        page = await browser.get("/console/login")
        browser.cookies.set("studio_csrf", "y" * 43, domain="testserver.local")
        response = await browser.post(
            "/console/login",
            data={
                "username": "manager",
                "password": PASSWORD,
                "next": "//evil.example/x",
                "csrf_token": form_token(page.text),
            },
            headers=HTML,
        )
        assert response.status_code == 303
        location = response.headers["location"]
        assert location.startswith("/console/login?") and "next" not in location
        assert "studio_session" not in browser.cookies
        again = await browser.get(location, headers=HTML)
        assert again.status_code == 200 and "log in again" in again.text
        retry = await browser.post(
            "/console/login",
            data={
                "username": "manager",
                "password": PASSWORD,
                "csrf_token": form_token(again.text),
            },
            headers=HTML,
        )
        assert retry.status_code == 303 and "studio_session" in browser.cookies
