"""In Chromium: a console page whose session ended while its socket was down shows the login
form once the socket reconnects, instead of retrying for good.

The in-memory controller TEST DOUBLE (console_double.py), with the real database, app,
fan-out, WebSocket and console.js.
"""

from __future__ import annotations

import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, sign_in
from playwright.async_api import Browser

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]


async def test_a_page_whose_session_ended_while_its_socket_was_down_shows_the_login(
    browser: Browser, database: Database
) -> None:
    fanout = Fanout(bus=None)
    users = UserStore(database, hasher=fast_hasher())
    manager = await users.add("manager", PASSWORD, "manager", by="test")
    app = create_app(context(database, fanout, InMemoryController(fanout, ["bj1"])))
    async with WebServer(app, port=0) as server:
        ctx = await browser.new_context()
        ctx.set_default_timeout(20_000)
        page = await ctx.new_page()
        await sign_in(page, server.url)
        await page.goto(f"{server.url}/console/tables/bj1")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        # The fragments the socket's opening re-fetches are back (2 on the table page).
        await page.wait_for_function("() => Number(document.body.dataset.refreshes) >= 2")
        # The session ends (expiry, an admin disabling the account, ...) while the socket is
        # down: here both at once, before the stream's own 20 s session check could notice.
        await app.state.console_auth.sessions.revoke_user(manager.id)
        fanout.end_streams()  # the socket drops (1012), console.js reconnects after 1 s
        # Before: the reconnect was refused at the handshake, which the page saw as 1006
        # and retried every 10 s for good, frozen on "reconnecting".
        # Waited for by its form, not by the navigation: under CI load wait_for_url once
        # failed on a navigation aborted (net::ERR_ABORTED), likely by a second one to the
        # login (the socket's close and a fragment's refusal both send the page there).
        await page.wait_for_selector("#login-form", timeout=10_000)
        assert page.url.startswith(f"{server.url}/console/login")
        await ctx.close()
