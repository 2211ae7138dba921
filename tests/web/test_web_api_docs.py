"""The API's description (/openapi.json) needs what a REST read needs: a console session
of any role or the platform token. Before, FastAPI served it to anyone.

There are no HTML doc pages (/docs, /redoc): FastAPI's loaded their scripts from
cdn.jsdelivr.net, with no integrity check, on the console's origin."""

from __future__ import annotations

import re

import httpx
from argon2 import PasswordHasher

import studio.console  # registers the users/sessions tables before create_all
from studio.console import ConsoleSettings, UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebContext, create_app

assert studio.console.install is not None

TOKEN = "test-platform-token"
PASSWORD = "correct horse battery"
DOCS = ("/openapi.json",)
HTML_DOCS = ("/docs", "/redoc")


def client(database: Database) -> httpx.AsyncClient:
    settings = ConsoleSettings(argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1)
    ctx = WebContext(
        fanout=Fanout(bus=None),
        db=database,
        extras={"console": settings, "platform_token": TOKEN},
    )
    transport = httpx.ASGITransport(app=create_app(ctx))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def test_strangers_get_401_for_every_docs_page(database: Database) -> None:
    async with client(database) as http:
        for path in DOCS:
            for headers in (
                {},
                {"Accept": "text/html"},  # a browser: the REST reads' 401, not a redirect
                {"Authorization": "Bearer nope"},
                {"Authorization": f"Bearer {TOKEN}x"},
            ):
                response = await http.get(path, headers=headers)
                assert response.status_code == 401, (path, headers)
                assert response.json() == {"detail": "log in, or send the platform token"}
            # The REST API answers a stranger the same way.
            assert (await http.get("/api/tables")).status_code == 401


async def test_the_platform_token_reads_the_docs(database: Database) -> None:
    async with client(database) as http:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        pages = {path: await http.get(path, headers=auth) for path in DOCS}
    assert all(page.status_code == 200 for page in pages.values())
    schema = pages["/openapi.json"].json()
    assert "/api/tables/{table}/rounds" in schema["paths"]
    assert not {"/docs", "/redoc", "/openapi.json"} & set(schema["paths"])  # not listed


async def test_no_html_doc_pages_loading_a_cdns_scripts(database: Database) -> None:
    async with client(database) as http:
        auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/html"}
        for path in HTML_DOCS:
            page = await http.get(path, headers=auth)
            assert page.status_code == 404, path
            assert "cdn.jsdelivr.net" not in page.text


async def test_a_viewer_session_reads_the_docs_until_it_logs_out(database: Database) -> None:
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await UserStore(database, hasher=hasher).add("watcher", PASSWORD, "viewer", by="test")
    async with client(database) as http:
        page = await http.get("/console/login")
        match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert match
        form = {"username": "watcher", "password": PASSWORD, "csrf_token": match.group(1)}
        assert (await http.post("/console/login", data=form)).status_code == 303
        logged_in = {path: (await http.get(path)).status_code for path in DOCS}
        schema = (await http.get("/openapi.json")).json()
        csrf = {"X-CSRF-Token": http.cookies["studio_csrf"]}
        assert (await http.post("/console/logout", headers=csrf)).status_code == 303
        logged_out = {path: (await http.get(path)).status_code for path in DOCS}
    assert logged_in == dict.fromkeys(DOCS, 200)
    assert schema["info"]["title"] == "Studio controller"
    assert logged_out == dict.fromkeys(DOCS, 401)
