"""In Chromium: an alert raised while the console's socket is down is cued once the socket
is back, on whatever page is open, acknowledged or not.

A review: with the socket reconnecting when an alert was raised, the overview showed it on
reconnect with no cue at all (its fragments carried no alert ids), and the alerts page cued
it only while still `raised` (one a dealer acknowledged meanwhile was never cued for a
manager). Every live fragment (the header's alert badge included) now carries the open
alerts, and console.js cues each open alert it has not cued yet: the overview, the alert
list, a table's page, the dealer display and the dealer's table list (the badge alone).

The in-memory controller TEST DOUBLE (console_double.py), with the real database, app,
fan-out, WebSocket and console.js; the first socket is held dead by Playwright (nothing
from the server) until the test closes it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, sign_in
from playwright.async_api import Browser, WebSocketRoute

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]

# How many fragments a socket's opening re-fetches, each counted in `refreshes` once back
# (the broker link's, polled, is not counted).
FRAGMENTS = "document.querySelectorAll('[data-fragment]:not([data-broker-link])').length"

PAGES = [
    "/console/",
    "/console/alerts",
    "/console/dealer",
    "/console/tables/bj1",
    "/console/dealer/bj1",
]


async def _cued_after_reconnect(
    browser: Browser, database: Database, path: str, acknowledged: bool, already_open: bool
) -> dict[str, Any]:
    fanout = Fanout(bus=None)
    controller = InMemoryController(fanout, ["bj1"])
    users = UserStore(database, hasher=fast_hasher())
    await users.add("manager", PASSWORD, "manager", by="test")
    if already_open:  # open before the page was drawn: shown, and not news
        controller.add_alert("bj1", "heartbeat_late", "warning", datetime.now(UTC))
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        ctx = await browser.new_context()
        ctx.set_default_timeout(20_000)
        page = await ctx.new_page()
        await sign_in(page, server.url)

        sockets: list[WebSocketRoute] = []

        def route(ws: WebSocketRoute) -> None:
            sockets.append(ws)
            if len(sockets) > 1:
                ws.connect_to_server()  # the link is back

        await page.route_web_socket("**/console/ws*", route)
        await page.goto(f"{server.url}{path}")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        # The first opening's fragments are back: a later refresh is the reconnect's.
        await page.wait_for_function(
            f"() => Number(document.body.dataset.refreshes || 0) >= {FRAGMENTS}"
        )
        assert await page.evaluate("window.studioCues") == 0
        # Raised (and acknowledged by a dealer) while the page hears nothing.
        alert_id = await controller.raise_mismatch("bj1", "KH", "KD")
        if acknowledged:
            await controller.acknowledge_alert(alert_id, user="dealer")
        refreshes = await page.evaluate("Number(document.body.dataset.refreshes || 0)")
        await sockets[0].close(code=1011)  # console.js reconnects, and re-fetches its fragments
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        # Every fragment of the opening is back (instead of 800 ms more for them).
        await page.wait_for_function(
            f"n => Number(document.body.dataset.refreshes || 0) >= n + {FRAGMENTS}",
            arg=refreshes,
        )
        seen = {
            "cues": await page.evaluate("window.studioCues"),
            "title": await page.title(),
            "banner": await page.evaluate(
                "(() => { const b = document.getElementById('alert-banner');"
                " return b && !b.hidden ? b.textContent.trim() : ''; })()"
            ),
        }
        await ctx.close()
        return seen


@pytest.mark.parametrize("path", PAGES)
async def test_an_alert_acknowledged_while_the_socket_was_down_is_cued_on_reconnect(
    browser: Browser, database: Database, path: str
) -> None:
    seen = await _cued_after_reconnect(browser, database, path, True, already_open=True)
    # Before: no cue on any page (the alerts page cued only an alert still `raised`).
    assert seen["cues"] == 1, (path, seen)
    assert seen["title"].startswith("(1) "), seen
    if path != "/console/dealer/bj1":  # the dealer display has no header or banner
        assert "New critical alert on bj1: shoe scanner read KH" in seen["banner"], seen


async def test_an_alert_raised_while_the_socket_was_down_is_cued_on_the_overview(
    browser: Browser, database: Database
) -> None:
    seen = await _cued_after_reconnect(browser, database, "/console/", False, already_open=False)
    assert seen["cues"] == 1, seen  # before: 0
    assert "New critical alert on bj1" in seen["banner"], seen
